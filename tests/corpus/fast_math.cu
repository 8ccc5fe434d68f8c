// CUDA's fast-math intrinsics, which map onto the PTX approximate instructions: __expf (ex2.approx after a
// multiply by log2 e), __logf (lg2.approx times ln 2), __sinf / __cosf (sin/cos.approx), __fdividef
// (div.approx.f32) and rsqrtf (rsqrt.approx.f32). Written for gpusim's conformance corpus.
extern "C" __global__ void fast_math(const float *x, const float *y, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i];
    out[0 * n + i] = __expf(a);
    out[1 * n + i] = __logf(b);
    out[2 * n + i] = __sinf(a);
    out[3 * n + i] = __cosf(a);
    out[4 * n + i] = __fdividef(a, b);
    out[5 * n + i] = rsqrtf(b);
}
