// staged_sum: cuda::memcpy_async into shared memory tracked by a cuda::barrier (the CUDA Programming Guide's
// pattern), double-buffered. Written here; compiled by: nvcc -arch=sm_80 -ptx staged_sum.cu (CUDA 13.0).
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void staged_sum(const float* in, float* out, int n_tiles) {
    __shared__ float tile[2][256];
    #pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar[2];
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) { init(&bar[0], block.size()); init(&bar[1], block.size()); }
    block.sync();
    float acc = 0.f;
    cuda::memcpy_async(block, tile[0], in, sizeof(float) * 256, bar[0]);
    for (int t = 0; t < n_tiles; ++t) {
        int cur = t & 1;
        if (t + 1 < n_tiles)
            cuda::memcpy_async(block, tile[cur ^ 1], in + (t + 1) * 256, sizeof(float) * 256, bar[cur ^ 1]);
        bar[cur].arrive_and_wait();
        acc += tile[cur][threadIdx.x];
        block.sync();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
