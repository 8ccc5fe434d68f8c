// Vector add four floats at a time: float4 loads through the read-only path (__ldg: ld.global.nc.v4.f32)
// and float4 stores, with a scalar tail for n not a multiple of 4. Written for gpusim's conformance corpus.
extern "C" __global__ void vector_add_float4(const float *__restrict__ a, const float *__restrict__ b,
                                             float *__restrict__ c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    if (i < n4) {
        float4 x = __ldg(reinterpret_cast<const float4 *>(a) + i);
        float4 y = __ldg(reinterpret_cast<const float4 *>(b) + i);
        reinterpret_cast<float4 *>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    int tail = n4 * 4 + i;
    if (i < n - n4 * 4) c[tail] = a[tail] + b[tail];
}
