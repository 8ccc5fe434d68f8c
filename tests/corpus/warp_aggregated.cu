// Stream compaction (keep the positive elements) with warp-aggregated atomics: one atomicAdd per warp
// by the lowest active lane, the base broadcast with a shuffle, each lane's slot from the popcount of the
// lower active lanes. Twice: by hand (activemask / lanemask_lt / popc / shfl) and with cooperative
// groups' coalesced_threads(). Written for gpusim's conformance corpus.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ unsigned lanemask_lt() {
    unsigned mask;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
    return mask;
}

__device__ int aggregated_increment(int *counter) {
    unsigned active = __activemask();
    int leader = __ffs(active) - 1;
    int lane = threadIdx.x % warpSize;
    int base = 0;
    if (lane == leader) base = atomicAdd(counter, __popc(active));
    base = __shfl_sync(active, base, leader);
    return base + __popc(active & lanemask_lt());
}

extern "C" __global__ void filter_positive(const int *src, int *dst, int *count, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && src[i] > 0) dst[aggregated_increment(count)] = src[i];
}

extern "C" __global__ void filter_positive_cg(const int *src, int *dst, int *count, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && src[i] > 0) {
        cg::coalesced_group active = cg::coalesced_threads();
        int base = 0;
        if (active.thread_rank() == 0) base = atomicAdd(count, (int)active.size());
        base = active.shfl(base, 0);
        dst[base + active.thread_rank()] = src[i];
    }
}
