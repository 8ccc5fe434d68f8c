// Double-buffered tile pipelines as Hopper kernels are written (tests/test_mbarrier_kernels.py, issue 25).
// scale_tiles: cuda::barrier + cuda::memcpy_async (nvcc lowers the aligned block-wide copy to cp.async.bulk
// completing bytes on the barrier's mbarrier). bulk_tiles: the same pipeline through cuda::ptx (mbarrier,
// cp.async.bulk both ways, elect.sync, fence.proxy.async), the producer an elected lane of warp 0.
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/ptx>

namespace cg = cooperative_groups;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;
constexpr int TILE = 256;   // floats per tile: one per thread

__device__ __forceinline__ bool elect_one() {   // elect.sync _|p over the whole warp
  unsigned elected;
  asm volatile("{\n\t.reg .pred p;\n\telect.sync _|p, 0xffffffff;\n\tselp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(elected));
  return elected != 0;
}

__global__ void scale_tiles(const float* __restrict__ in, float* __restrict__ out, int tiles, float a, float b) {
  __shared__ alignas(128) float buf[2][TILE];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ block_barrier bar[2];
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) {
    init(&bar[0], block.size());
    init(&bar[1], block.size());
  }
  block.sync();
  const float* src = in + (size_t)blockIdx.x * tiles * TILE;
  float* dst = out + (size_t)blockIdx.x * tiles * TILE;
  cuda::memcpy_async(block, buf[0], src, cuda::aligned_size_t<16>(sizeof(float) * TILE), bar[0]);
  for (int t = 0; t < tiles; ++t) {
    int s = t & 1;
    if (t + 1 < tiles)
      cuda::memcpy_async(block, buf[s ^ 1], src + (t + 1) * TILE, cuda::aligned_size_t<16>(sizeof(float) * TILE),
                         bar[s ^ 1]);
    bar[s].arrive_and_wait();
    dst[t * TILE + threadIdx.x] = a * buf[s][threadIdx.x] + b;
    block.sync();   // every thread has read buf[s] before it is refilled
  }
}

__global__ void bulk_tiles(const float* __restrict__ in, float* __restrict__ out, int tiles, float a, float b) {
  __shared__ alignas(128) float buf[2][TILE];
  __shared__ alignas(128) float res[TILE];
  __shared__ uint64_t full[2];
  bool producer = false;
  if (threadIdx.x < 32) producer = elect_one();
  if (producer) {
    cuda::ptx::mbarrier_init(&full[0], 1);
    cuda::ptx::mbarrier_init(&full[1], 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __syncthreads();
  const float* src = in + (size_t)blockIdx.x * tiles * TILE;
  float* dst = out + (size_t)blockIdx.x * tiles * TILE;
  constexpr uint32_t bytes = sizeof(float) * TILE;
  if (producer) {
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                         &full[0], bytes);
    cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, buf[0], src, bytes, &full[0]);
  }
  for (int t = 0; t < tiles; ++t) {
    int s = t & 1;
    if (producer && t + 1 < tiles) {
      cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                           &full[s ^ 1], bytes);
      cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, buf[s ^ 1],
                               src + (t + 1) * TILE, bytes, &full[s ^ 1]);
    }
    while (!cuda::ptx::mbarrier_try_wait_parity(&full[s], (uint32_t)((t >> 1) & 1))) {
    }
    float v = a * buf[s][threadIdx.x] + b;
    if (producer) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>());   // res is free again
    __syncthreads();
    res[threadIdx.x] = v;
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);   // generic-proxy writes before the bulk store reads
    __syncthreads();
    if (producer) {
      cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, dst + t * TILE, res, bytes);
      cuda::ptx::cp_async_bulk_commit_group();
    }
  }
  if (producer) cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>());
}
