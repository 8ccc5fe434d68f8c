// elementwise_chain: out = relu(a * b + c) as three separate kernels, each a full
// round trip through memory (compare with elementwise_fused). The product and the
// sum are rounded separately, so no FMA contraction happens across kernels.
extern "C" __global__ void ew_mul(const float* a, const float* b, float* product, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        product[i] = a[i] * b[i];
    }
}

extern "C" __global__ void ew_add(const float* product, const float* c, float* sum, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        sum[i] = product[i] + c[i];
    }
}

extern "C" __global__ void ew_relu(const float* sum, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = fmaxf(sum[i], 0.0f);
    }
}
