// Layer normalisation, forward and backward, in the style of hand-written LLM-training kernels: one warp
// per row, its reductions through cooperative groups (cg::reduce over a 32-thread tile). Written here
// from the algorithm (Ba et al. 2016): y = (x - mean) * rstd * w + b, rstd = 1 / sqrt(var + eps).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// forward: out[N, C], mean[N], rstd[N]; each warp normalises one row
extern "C" __global__ void __launch_bounds__(1024, 2)
layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                  const float *bias, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (row >= N) return;
    const float *x = inp + (long)row * C;
    float sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) sum += x[i];
    float m = cg::reduce(warp, sum, cg::plus<float>()) / C;
    float sq = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        float d = x[i] - m;
        sq += d * d;
    }
    float s = rsqrtf(cg::reduce(warp, sq, cg::plus<float>()) / C + 1e-5f);
    float *o = out + (long)row * C;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) o[i] = (x[i] - m) * s * weight[i] + bias[i];
    if (warp.thread_rank() == 0) {
        mean[row] = m;
        rstd[row] = s;
    }
}

// backward: dinp[N, C] (accumulated: +=), dweight[C] and dbias[C] (accumulated with atomics)
extern "C" __global__ void __launch_bounds__(512, 2)
layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                   const float *weight, const float *mean, const float *rstd, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (row >= N) return;
    const float *dy = dout + (long)row * C;
    const float *x = inp + (long)row * C;
    float m = mean[row], s = rstd[row];
    float dnorm_sum = 0.0f, dnorm_norm_sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        float norm = (x[i] - m) * s;
        float dnorm = weight[i] * dy[i];
        dnorm_sum += dnorm;
        dnorm_norm_sum += dnorm * norm;
    }
    float dnorm_mean = cg::reduce(warp, dnorm_sum, cg::plus<float>()) / C;
    float dnorm_norm_mean = cg::reduce(warp, dnorm_norm_sum, cg::plus<float>()) / C;
    float *dx = dinp + (long)row * C;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        float norm = (x[i] - m) * s;
        float dnorm = weight[i] * dy[i];
        atomicAdd(&dbias[i], dy[i]);
        atomicAdd(&dweight[i], norm * dy[i]);
        dx[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
    }
}

// fused residual + layernorm: residual = a + b, then layernorm of residual (one warp per row)
extern "C" __global__ void __launch_bounds__(1024, 2)
fused_residual_layernorm(float *residual, float *out, float *mean, float *rstd, const float *a,
                         const float *b, const float *weight, const float *bias, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (row >= N) return;
    long base = (long)row * C;
    float sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        float r = a[base + i] + b[base + i];
        residual[base + i] = r;
        sum += r;
    }
    float m = cg::reduce(warp, sum, cg::plus<float>()) / C;
    float sq = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        float d = residual[base + i] - m;
        sq += d * d;
    }
    float s = rsqrtf(cg::reduce(warp, sq, cg::plus<float>()) / C + 1e-5f);
    for (int i = warp.thread_rank(); i < C; i += warp.size())
        out[base + i] = (residual[base + i] - m) * s * weight[i] + bias[i];
    if (warp.thread_rank() == 0) {
        mean[row] = m;
        rstd[row] = s;
    }
}
