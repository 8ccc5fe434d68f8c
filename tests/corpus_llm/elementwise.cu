// Elementwise LLM-training kernels. GELU (tanh approximation, Hendrycks and Gimpel 2016) on bf16 data moved
// as 128-bit packets of 8 values (a 16-byte aligned struct loaded and stored as one int4, as "Packed128"
// types do), computed in float. AdamW (Loshchilov and Hutter 2019) on float parameters.
#include <cuda_bf16.h>

struct alignas(16) Packed128 {
    __nv_bfloat16 v[8];
};

__device__ __forceinline__ Packed128 load128(const __nv_bfloat16 *p) {
    int4 bits = *reinterpret_cast<const int4 *>(p);
    return *reinterpret_cast<Packed128 *>(&bits);
}

__device__ __forceinline__ void store128(__nv_bfloat16 *p, Packed128 value) {
    *reinterpret_cast<int4 *>(p) = *reinterpret_cast<int4 *>(&value);
}

#define GELU_SCALE 0.7978845608028654f   // sqrt(2 / pi)

extern "C" __global__ void gelu_forward_bf16(__nv_bfloat16 *out, const __nv_bfloat16 *inp, int N) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    if (i >= N) return;
    Packed128 x = load128(inp + i), y;
    for (int k = 0; k < 8; k++) {
        float xf = __bfloat162float(x.v[k]);
        float cube = 0.044715f * xf * xf * xf;
        y.v[k] = __float2bfloat16(0.5f * xf * (1.0f + tanhf(GELU_SCALE * (xf + cube))));
    }
    store128(out + i, y);
}

extern "C" __global__ void adamw(float *params, float *m, float *v, const float *grads, long n, float lr,
                                 float beta1, float beta2, float beta1_correction, float beta2_correction,
                                 float eps, float weight_decay) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float g = grads[i];
    float mi = beta1 * m[i] + (1.0f - beta1) * g;
    float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float m_hat = mi / beta1_correction, v_hat = vi / beta2_correction;
    params[i] -= lr * (m_hat / (sqrtf(v_hat) + eps) + weight_decay * params[i]);
}

// bias gradient: dbias[c] += sum over rows of dout[r, c]; each block sums a tile of rows for its columns in
// shared memory, then one atomicAdd per column and block
extern "C" __global__ void bias_backward(float *dbias, const float *dout, int N, int C, int rows_per_block) {
    extern __shared__ float partial[];   // blockDim.y x blockDim.x
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r0 = blockIdx.y * rows_per_block;
    float sum = 0.0f;
    if (c < C)
        for (int r = r0 + threadIdx.y; r < min(N, r0 + rows_per_block); r += blockDim.y) sum += dout[(long)r * C + c];
    partial[threadIdx.y * blockDim.x + threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.y / 2; stride > 0; stride /= 2) {
        if (threadIdx.y < stride)
            partial[threadIdx.y * blockDim.x + threadIdx.x] += partial[(threadIdx.y + stride) * blockDim.x + threadIdx.x];
        __syncthreads();
    }
    if (threadIdx.y == 0 && c < C) atomicAdd(&dbias[c], partial[threadIdx.x]);
}
