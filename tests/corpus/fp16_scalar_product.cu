// Half-precision scalar products (the CUDA samples' fp16ScalarProduct algorithm): each thread multiplies
// pairs of half2 values (__hmul2, packed f16x2 arithmetic), accumulates in half2 with __hfma2 for a few
// terms, converts the two halves to float and the block reduces in float; one partial per block.
// Written for gpusim's conformance corpus.
#include <cuda_fp16.h>
extern "C" __global__ void fp16_scalar_product(const __half2 *a, const __half2 *b, float *partial, int n2) {
    __shared__ float sums[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = i; k < n2; k += blockDim.x * gridDim.x) {
        __half2 p = __hmul2(a[k], b[k]);
        acc += __low2float(p) + __high2float(p);
    }
    sums[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sums[threadIdx.x] += sums[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
}

// __hfma2 chains: d = a * b + c elementwise on half2, then converted to float (exactly representable).
extern "C" __global__ void fp16_fma(const __half2 *a, const __half2 *b, const __half2 *c, float2 *out, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2) return;
    __half2 d = __hfma2(a[i], b[i], c[i]);
    out[i] = __half22float2(d);
}
