// Parallel reduction, the eight classic steps (Harris, "Optimizing Parallel Reduction in CUDA") and two
// cooperative-groups forms. Written for gpusim's conformance corpus from the algorithm descriptions.
// Every kernel writes one partial sum per block (reduce_cg_tile16: one per 16-thread tile).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

#define FULL_MASK 0xffffffffu

// 0: interleaved addressing, divergent branch (tid % (2s)).
extern "C" __global__ void reduce0(const float *in, float *out, unsigned n) {
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// 1: interleaved addressing with a strided index: no divergence, shared bank conflicts.
extern "C" __global__ void reduce1(const float *in, float *out, unsigned n) {
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        unsigned index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// 2: sequential addressing (halving stride, contiguous active threads).
extern "C" __global__ void reduce2(const float *in, float *out, unsigned n) {
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// 3: first add during the global load (each block covers 2 * blockDim elements).
extern "C" __global__ void reduce3(const float *in, float *out, unsigned n) {
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * (blockDim.x * 2) + tid;
    float sum = i < n ? in[i] : 0.0f;
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sum;
}

// 4: the last warp unrolled (warp-synchronous through volatile shared memory and __syncwarp).
extern "C" __global__ void reduce4(const float *in, float *out, unsigned n) {
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * (blockDim.x * 2) + tid;
    float sum = i < n ? in[i] : 0.0f;
    if (i + blockDim.x < n) sum += in[i + blockDim.x];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        volatile float *v = sdata;
        for (unsigned offset = 32; offset > 0; offset >>= 1) {
            sum += v[tid + offset];
            __syncwarp();
            v[tid] = sum;
            __syncwarp();
        }
    }
    if (tid == 0) out[blockIdx.x] = sum;
}

template <unsigned BLOCK>
__device__ float block_sum_unrolled(float sum, float *sdata) {
    unsigned tid = threadIdx.x;
    sdata[tid] = sum;
    __syncthreads();
    if (BLOCK >= 512) { if (tid < 256) sdata[tid] = sum = sum + sdata[tid + 256]; __syncthreads(); }
    if (BLOCK >= 256) { if (tid < 128) sdata[tid] = sum = sum + sdata[tid + 128]; __syncthreads(); }
    if (BLOCK >= 128) { if (tid < 64) sdata[tid] = sum = sum + sdata[tid + 64]; __syncthreads(); }
    if (tid < 32) {
        if (BLOCK >= 64) sum += sdata[tid + 32];
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_down_sync(FULL_MASK, sum, offset);
    }
    return sum;
}

// 5: completely unrolled for a block size known at compile time (a template parameter).
template <unsigned BLOCK>
__device__ void reduce5_body(const float *in, float *out, unsigned n) {
    __shared__ float sdata[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * (BLOCK * 2) + tid;
    float sum = i < n ? in[i] : 0.0f;
    if (i + BLOCK < n) sum += in[i + BLOCK];
    sum = block_sum_unrolled<BLOCK>(sum, sdata);
    if (tid == 0) out[blockIdx.x] = sum;
}
extern "C" __global__ void __launch_bounds__(128) reduce5(const float *in, float *out, unsigned n) {
    reduce5_body<128>(in, out, n);
}

// 6: multiple elements per thread (grid-stride loop, two loads per step), then as 5.
template <unsigned BLOCK>
__device__ void reduce6_body(const float *in, float *out, unsigned n) {
    __shared__ float sdata[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned grid_size = BLOCK * 2 * gridDim.x;
    float sum = 0.0f;
    for (unsigned i = blockIdx.x * BLOCK * 2 + tid; i < n; i += grid_size) {
        sum += in[i];
        if (i + BLOCK < n) sum += in[i + BLOCK];
    }
    sum = block_sum_unrolled<BLOCK>(sum, sdata);
    if (tid == 0) out[blockIdx.x] = sum;
}
extern "C" __global__ void __launch_bounds__(128) reduce6(const float *in, float *out, unsigned n) {
    reduce6_body<128>(in, out, n);
}

// 7: multiple elements per thread with warp-shuffle reductions (one shared word per warp).
extern "C" __global__ void reduce7(const float *in, float *out, unsigned n) {
    __shared__ float warp_sums[32];
    unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    float sum = 0.0f;
    for (unsigned i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) sum += in[i];
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_down_sync(FULL_MASK, sum, offset);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    unsigned warps = (blockDim.x + 31) / 32;
    if (warp == 0) {
        sum = lane < warps ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_down_sync(FULL_MASK, sum, offset);
        if (lane == 0) out[blockIdx.x] = sum;
    }
}

// Cooperative groups: thread_block + tiled_partition<32> + cg::reduce (a warp of the block at a time).
extern "C" __global__ void reduce_cg_tile32(const float *in, float *out, unsigned n) {
    __shared__ float tile_sums[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    float sum = 0.0f;
    for (unsigned i = blockIdx.x * block.size() + block.thread_rank(); i < n; i += block.size() * gridDim.x)
        sum += in[i];
    sum = cg::reduce(tile, sum, cg::plus<float>());
    if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = sum;
    block.sync();
    if (tile.meta_group_rank() == 0) {
        sum = tile.thread_rank() < tile.meta_group_size() ? tile_sums[tile.thread_rank()] : 0.0f;
        sum = cg::reduce(tile, sum, cg::plus<float>());
        if (tile.thread_rank() == 0) out[blockIdx.x] = sum;
    }
}

// Cooperative groups: integer sums over 16-thread tiles (cg::reduce -> redux.sync with a half-warp mask)
// and the tile's maximum through shuffles; one result per tile.
extern "C" __global__ void reduce_cg_tile16(const int *in, int *sums, int *maxima, unsigned n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    int s = cg::reduce(tile, v, cg::plus<int>());
    int m = v;
    for (int offset = tile.size() / 2; offset > 0; offset /= 2) m = max(m, tile.shfl_xor(m, offset));
    unsigned t = i / 16;
    if (tile.thread_rank() == 0 && i < n) { sums[t] = s; maxima[t] = m; }
}

// Cooperative groups: binary_partition of each warp by a predicate (odd values), then cg::reduce within
// each partition (the CUDA samples' binaryPartitionCG): per block, the count and the sum of the odd
// values, one atomicAdd per partition leader.
extern "C" __global__ void reduce_cg_binary_partition(const int *in, int *odd_count, int *odd_sum, unsigned n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    bool odd = v & 1;
    cg::coalesced_group part = cg::binary_partition(tile, odd);
    int count = cg::reduce(part, 1, cg::plus<int>());
    int sum = cg::reduce(part, v, cg::plus<int>());
    if (odd && part.thread_rank() == 0) {
        atomicAdd(odd_count, count);
        atomicAdd(odd_sum, sum);
    }
}

// Double precision: grid-stride sums, warp reduction over 64-bit shuffles, one partial per block.
extern "C" __global__ void reduce_double(const double *in, double *out, unsigned n) {
    __shared__ double warp_sums[32];
    unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    double sum = 0.0;
    for (unsigned i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) sum += in[i];
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(FULL_MASK, sum, offset);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0;
        for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(FULL_MASK, sum, offset);
        if (lane == 0) out[blockIdx.x] = sum;
    }
}
