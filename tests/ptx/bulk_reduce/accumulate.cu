// cp.reduce.async.bulk (PTX ISA 8.0, sm_90): each block stages its partial results in shared memory and one
// thread adds them into global memory with one bulk reduction -- how FlashAttention-3's backward pass
// accumulates dQ across the blocks that own the same rows. Also other operations and types, through libcu++'s
// cuda::ptx wrappers. Block b adds src[b * N + i] * 2 into acc[i]; min, max, or and inc combine
// src_u32[b * N + i] into mins, maxs, ors and incs; add.u64 adds src_u64's into sums64; add.noftz.bf16 and
// max.f16 combine the 16-bit rows into acc_bf16 and max_f16.
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#define N 256   // elements per block: 1 KB of f32, a multiple of 16 bytes for every type

__device__ __forceinline__ void bulk_done() {
    cuda::ptx::cp_async_bulk_commit_group();
    cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>());
}

extern "C" __global__ void accumulate(const float* src, float* acc, const uint32_t* src_u32, uint32_t* mins,
                                      uint32_t* maxs, uint32_t* ors, uint32_t* incs, const uint64_t* src_u64,
                                      uint64_t* sums64, const __nv_bfloat16* src_bf16, __nv_bfloat16* acc_bf16,
                                      const __half* src_f16, __half* max_f16) {
    __shared__ alignas(16) float staged[N];
    __shared__ alignas(16) uint32_t words[N];
    __shared__ alignas(16) uint64_t longs[N];
    __shared__ alignas(16) __nv_bfloat16 brain[N];
    __shared__ alignas(16) __half halves[N];
    const int i = threadIdx.x, at = blockIdx.x * N + i;
    staged[i] = src[at] * 2.0f;
    words[i] = src_u32[at];
    longs[i] = src_u64[at];
    brain[i] = src_bf16[at];
    halves[i] = src_f16[at];
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);     // the writes, visible to the bulk copies
    __syncthreads();
    if (i == 0) {
        cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_add,
                                        acc, staged, N * 4);
        cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_min,
                                        mins, words, N * 4);
        cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_max,
                                        maxs, words, N * 4);
        cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_or_op,
                                        ors, words, N * 4);
        cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_inc,
                                        incs, words, N * 4);
        cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_add,
                                        sums64, longs, N * 8);
        cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_add,
                                        acc_bf16, brain, N * 2);
        cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_max,
                                        max_f16, halves, N * 2);
        bulk_done();
    }
}
