// Cooperative groups as nvcc compiles them (tests/test_cooperative_groups.py checks each against numpy).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// tiled_partition<N>, N <= 32: out[i] = reduce(tile, in) * 1000 + tile.shfl(in, 0); rank[i] = thread_rank
template <int N>
__device__ void tile_reduce(const int* in, int* out, int* rank) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    int sum = cg::reduce(tile, v, cg::plus<int>());
    int first = tile.shfl(v, 0);
    tile.sync();
    out[i] = sum * 1000 + first;
    rank[i] = tile.thread_rank() + 100 * tile.meta_group_rank();
}
extern "C" __global__ void tile1(const int* in, int* out, int* rank) { tile_reduce<1>(in, out, rank); }
extern "C" __global__ void tile2(const int* in, int* out, int* rank) { tile_reduce<2>(in, out, rank); }
extern "C" __global__ void tile4(const int* in, int* out, int* rank) { tile_reduce<4>(in, out, rank); }
extern "C" __global__ void tile8(const int* in, int* out, int* rank) { tile_reduce<8>(in, out, rank); }
extern "C" __global__ void tile16(const int* in, int* out, int* rank) { tile_reduce<16>(in, out, rank); }
extern "C" __global__ void tile32(const int* in, int* out, int* rank) { tile_reduce<32>(in, out, rank); }

// tiles larger than a warp (barrier in reserved shared memory): each thread stores, the tile syncs, and
// each thread reads the value of the next thread of its tile (wrapping inside the tile)
template <int N>
__device__ void big_tile(const int* in, int* out, int* rank) {
    __shared__ int values[1024];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    values[threadIdx.x] = in[i];
    tile.sync();
    int base = tile.meta_group_rank() * N;
    out[i] = values[base + (tile.thread_rank() + 1) % N];
    rank[i] = tile.thread_rank() + 1000 * tile.meta_group_rank() + 100000 * tile.meta_group_size();
}
extern "C" __global__ void tile64(const int* in, int* out, int* rank) { big_tile<64>(in, out, rank); }
extern "C" __global__ void tile128(const int* in, int* out, int* rank) { big_tile<128>(in, out, rank); }

// this_thread_block().sync(): reverse the block through shared memory
extern "C" __global__ void block_reverse(const int* in, int* out) {
    __shared__ int values[1024];
    cg::thread_block block = cg::this_thread_block();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    values[block.thread_rank()] = in[i];
    block.sync();
    out[i] = values[block.size() - 1 - block.thread_rank()];
}

// coalesced_threads() in a branch only some lanes take: size, rank, shfl from rank 0, reduce
extern "C" __global__ void coalesced(const int* in, int* out, int* rank) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    if (v % 3 == 0) {
        cg::coalesced_group g = cg::coalesced_threads();
        int sum = cg::reduce(g, v, cg::plus<int>());
        out[i] = sum * 1000 + g.shfl(v, 0);
        rank[i] = g.thread_rank() + 100 * g.size();
    }
}

// labeled_partition: the lanes of a warp grouped by in % 4, reduced per group
extern "C" __global__ void labeled(const int* in, int* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cg::coalesced_group g = cg::labeled_partition(warp, in[i] % 4);
    out[i] = cg::reduce(g, in[i], cg::plus<int>()) * 100 + g.size();
}

// this_grid().sync(): every thread adds 1 to its element, the grid syncs, then each thread reads the
// element one block further on (written by another block before the sync)
extern "C" __global__ void grid_shift(int* data, int* out, int n) {
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    if (i < n) data[i] += 1;
    grid.sync();
    if (i < n) out[i] = data[(i + blockDim.x) % n];
}

// two grid syncs: per-block partial sums, then block 0 totals them, then everyone reads the total
extern "C" __global__ void grid_sum(const int* in, int* partial, int* out, int n) {
    __shared__ int block_sum;
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    int i = grid.thread_rank();
    if (block.thread_rank() == 0) block_sum = 0;
    block.sync();
    atomicAdd(&block_sum, i < n ? in[i] : 0);
    block.sync();
    if (block.thread_rank() == 0) partial[blockIdx.x] = block_sum;
    grid.sync();
    if (i == 0) {
        int total = 0;
        for (int b = 0; b < gridDim.x; ++b) total += partial[b];
        partial[gridDim.x] = total;
    }
    grid.sync();
    if (i < n) out[i] = partial[gridDim.x];
}
