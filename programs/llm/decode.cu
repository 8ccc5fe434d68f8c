// Kernels of one transformer decode step (lab `llm-step`): fp16 weights and KV cache, fp32 activations.
//   rmsnorm    out[b,:] = x[b,:] / sqrt(mean(x[b,:]^2) + eps) * weight          one block per batch row
//   gemv       y[b,n] = act(sum_k x[b,k] * W[k,n]) (+ residual[b,n])             W row-major [K][N]
//              block (32 threads x 2 columns, 8 k-slices), 4 batch rows per block; act 1 = SiLU; residual
//              may be null (a k-slice takes 8 consecutive k per step: 8 __half2 weight loads and 8 float4
//              x loads)
//   attention  appends this token's k,v to the cache at `pos`, then softmax(q.K / sqrt(d)) V over 0..pos
//              one block per (head, batch row); K cache [b][h][d][max_seq], V cache [b][h][max_seq][d]
//   add        out = a + b;   silu  out = x / (1 + exp(-x))                      elementwise
// Build: nvcc -ptx -O3 -arch=sm_80 -lineinfo decode.cu -o decode.ptx
#include <cuda_fp16.h>

#define GEMV_COLUMNS 64     // columns per block: 32 threads x 2 adjacent columns
#define GEMV_SLICES 8
#define GEMV_BATCH 4
#define GEMV_UNROLL 8
#define ATTN_UNROLL 8
#define NORM_THREADS 256
#define ATTN_THREADS 128
#define ATTN_MAX_SEQ 1024
#define ATTN_MAX_HEAD_DIM 128

__device__ __forceinline__ float silu_of(float v) { return v / (1.0f + __expf(-v)); }

extern "C" __global__ void rmsnorm(float* out, const float* x, const __half* weight, int dim, float eps)
{
    __shared__ float partial[NORM_THREADS];
    const float* row = x + (size_t)blockIdx.x * dim;
    float sum = 0.0f;
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        float v = row[i];
        sum += v * v;
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    float inv = rsqrtf(partial[0] / dim + eps);
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        out[(size_t)blockIdx.x * dim + i] = row[i] * inv * __half2float(weight[i]);
    }
}

extern "C" __global__ void gemv(float* y, const float* x, const __half* w, const float* residual,
                                int k_dim, int n_dim, int batch, int act)
{
    // Each thread takes two adjacent columns: one __half2 of weights per row, so a warp reads 128 bytes of
    // a row per load. Each k-slice (threadIdx.y) takes GEMV_UNROLL consecutive k per step: GEMV_UNROLL
    // weight loads and each batch row's GEMV_UNROLL x values as two float4. ptxas does not issue all of a
    // step's weight loads before the first FFMA (its sm_90 SASS: 2 to 4, with the first float4 loads), so
    // each weight load in flight should carry as many bytes as it can. Batch rows past the end read the last
    // row (always valid) and are never stored, so the loop has no branches. The vector path needs 16-byte
    // aligned x rows (k_dim % 4 == 0) and 4-byte aligned weight pairs (n_dim even); the scalar loop after
    // it does the rest.
    __shared__ float partial[GEMV_SLICES][GEMV_BATCH][GEMV_COLUMNS];
    int n = blockIdx.x * GEMV_COLUMNS + 2 * threadIdx.x;
    int b0 = blockIdx.y * GEMV_BATCH;
    const float* rows[GEMV_BATCH];
#pragma unroll
    for (int b = 0; b < GEMV_BATCH; ++b) rows[b] = x + (size_t)min(b0 + b, batch - 1) * k_dim;
    float acc[GEMV_BATCH][2];
#pragma unroll
    for (int b = 0; b < GEMV_BATCH; ++b) acc[b][0] = acc[b][1] = 0.0f;
    int step = GEMV_UNROLL * GEMV_SLICES;
    int vector_end = (k_dim & 3) == 0 && (n_dim & 1) == 0 ? k_dim / step * step : 0;
    int column = n < n_dim ? n : n_dim - 2;
    for (int k0 = threadIdx.y * GEMV_UNROLL; k0 < vector_end; k0 += step) {
        __half2 raw[GEMV_UNROLL];
        float4 xv[GEMV_BATCH][GEMV_UNROLL / 4];
#pragma unroll
        for (int u = 0; u < GEMV_UNROLL; ++u)
            raw[u] = *reinterpret_cast<const __half2*>(w + (size_t)(k0 + u) * n_dim + column);
#pragma unroll
        for (int b = 0; b < GEMV_BATCH; ++b) {
#pragma unroll
            for (int q = 0; q < GEMV_UNROLL / 4; ++q) xv[b][q] = reinterpret_cast<const float4*>(rows[b] + k0)[q];
        }
#pragma unroll
        for (int q = 0; q < GEMV_UNROLL / 4; ++q) {
            float2 w0 = __half22float2(raw[4 * q]), w1 = __half22float2(raw[4 * q + 1]);
            float2 w2 = __half22float2(raw[4 * q + 2]), w3 = __half22float2(raw[4 * q + 3]);
#pragma unroll
            for (int b = 0; b < GEMV_BATCH; ++b) {
                acc[b][0] += xv[b][q].x * w0.x;
                acc[b][1] += xv[b][q].x * w0.y;
                acc[b][0] += xv[b][q].y * w1.x;
                acc[b][1] += xv[b][q].y * w1.y;
                acc[b][0] += xv[b][q].z * w2.x;
                acc[b][1] += xv[b][q].z * w2.y;
                acc[b][0] += xv[b][q].w * w3.x;
                acc[b][1] += xv[b][q].w * w3.y;
            }
        }
    }
    int c0 = min(n, n_dim - 1), c1 = min(n + 1, n_dim - 1);
    for (int k = vector_end + threadIdx.y; k < k_dim; k += GEMV_SLICES) {
        float w0 = __half2float(w[(size_t)k * n_dim + c0]), w1 = __half2float(w[(size_t)k * n_dim + c1]);
#pragma unroll
        for (int b = 0; b < GEMV_BATCH; ++b) {
            acc[b][0] += rows[b][k] * w0;
            acc[b][1] += rows[b][k] * w1;
        }
    }
#pragma unroll
    for (int b = 0; b < GEMV_BATCH; ++b) {
        partial[threadIdx.y][b][2 * threadIdx.x] = acc[b][0];
        partial[threadIdx.y][b][2 * threadIdx.x + 1] = acc[b][1];
    }
    __syncthreads();
    if (threadIdx.y == 0) {
#pragma unroll
        for (int b = 0; b < GEMV_BATCH; ++b) {
            if (b0 + b >= batch) continue;
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                if (n + j >= n_dim) continue;
                float sum = 0.0f;
                for (int s = 0; s < GEMV_SLICES; ++s) sum += partial[s][b][2 * threadIdx.x + j];
                if (act == 1) sum = silu_of(sum);
                size_t at = (size_t)(b0 + b) * n_dim + n + j;
                if (residual != 0) sum = sum + residual[at];
                y[at] = sum;
            }
        }
    }
}

extern "C" __global__ void attention(float* out, const float* qkv, __half* k_cache, __half* v_cache,
                                     int pos, int heads, int head_dim, int max_seq, float scale)
{
    __shared__ float q[ATTN_MAX_HEAD_DIM];
    __shared__ float scores[ATTN_MAX_SEQ];
    __shared__ float reduce[ATTN_THREADS];
    int h = blockIdx.x;
    int b = blockIdx.y;
    int model_dim = heads * head_dim;
    const float* row = qkv + (size_t)b * 3 * model_dim;
    size_t kv_head = (size_t)b * heads + h;
    for (int i = threadIdx.x; i < head_dim; i += blockDim.x) {
        q[i] = row[h * head_dim + i];
        k_cache[(kv_head * head_dim + i) * max_seq + pos] = __float2half(row[model_dim + h * head_dim + i]);
        v_cache[(kv_head * max_seq + pos) * head_dim + i] = __float2half(row[2 * model_dim + h * head_dim + i]);
    }
    __syncthreads();
    float local_max = -3.0e38f;
    for (int t = threadIdx.x; t <= pos; t += blockDim.x) {
        float s = 0.0f;
        int i = 0;
        for (; i + ATTN_UNROLL <= head_dim; i += ATTN_UNROLL) {  // loads first: ATTN_UNROLL in flight
            __half raw[ATTN_UNROLL];
#pragma unroll
            for (int u = 0; u < ATTN_UNROLL; ++u) raw[u] = k_cache[(kv_head * head_dim + i + u) * max_seq + t];
#pragma unroll
            for (int u = 0; u < ATTN_UNROLL; ++u) s += q[i + u] * __half2float(raw[u]);
        }
        for (; i < head_dim; ++i) s += q[i] * __half2float(k_cache[(kv_head * head_dim + i) * max_seq + t]);
        s *= scale;
        scores[t] = s;
        local_max = fmaxf(local_max, s);
    }
    reduce[threadIdx.x] = local_max;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) reduce[threadIdx.x] = fmaxf(reduce[threadIdx.x], reduce[threadIdx.x + stride]);
        __syncthreads();
    }
    float row_max = reduce[0];
    __syncthreads();
    float local_sum = 0.0f;
    for (int t = threadIdx.x; t <= pos; t += blockDim.x) {
        float p = __expf(scores[t] - row_max);
        scores[t] = p;
        local_sum += p;
    }
    reduce[threadIdx.x] = local_sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) reduce[threadIdx.x] += reduce[threadIdx.x + stride];
        __syncthreads();
    }
    float inv_sum = 1.0f / reduce[0];
    for (int i = threadIdx.x; i < head_dim; i += blockDim.x) {
        float o = 0.0f;
        int t = 0;
        for (; t + ATTN_UNROLL <= pos + 1; t += ATTN_UNROLL) {  // loads first: ATTN_UNROLL in flight
            __half raw[ATTN_UNROLL];
#pragma unroll
            for (int u = 0; u < ATTN_UNROLL; ++u) raw[u] = v_cache[(kv_head * max_seq + t + u) * head_dim + i];
#pragma unroll
            for (int u = 0; u < ATTN_UNROLL; ++u) o += scores[t + u] * __half2float(raw[u]);
        }
        for (; t <= pos; ++t) o += scores[t] * __half2float(v_cache[(kv_head * max_seq + t) * head_dim + i]);
        out[(size_t)b * model_dim + h * head_dim + i] = o * inv_sum;
    }
}

extern "C" __global__ void add(float* out, const float* a, const float* b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

extern "C" __global__ void silu(float* out, const float* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = silu_of(x[i]);
}
