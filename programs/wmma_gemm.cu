// wmma_gemm: C = A * B with the WMMA API (<mma.h>): f16 inputs, f32 accumulators, m16n16k16 fragments.
// A is M x K row-major; B is K x N row-major (wmma_gemm) or N x K row-major, i.e. K x N column-major
// (wmma_gemm_bt); C is M x N row-major fp32. Each warp computes one 16x16 tile of C, loading its A and B
// fragments straight from global memory; a block of 4 warps covers a 32x32 tile (2 x 2 warps).
// M, N and K must be multiples of 16 (the fragment size); launch grid (N / 32, M / 32) rounded up, 128 threads.
#include <mma.h>

using namespace nvcuda;

#define TILE 16
#define WARPS_N 2

template <typename BLayout>
__device__ __forceinline__ void wmma_tile(const half* A, const half* B, float* C, int m, int n, int k,
                                          int b_step_k, int b_step_n)
{
    int warp = threadIdx.x / 32;
    int tile_m = (blockIdx.y * WARPS_N + warp / WARPS_N) * TILE;
    int tile_n = (blockIdx.x * WARPS_N + warp % WARPS_N) * TILE;
    if (tile_m >= m || tile_n >= n) {
        return;  // a whole warp leaves together: wmma needs all 32 lanes
    }
    wmma::fragment<wmma::matrix_a, TILE, TILE, TILE, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, TILE, TILE, TILE, half, BLayout> b;
    wmma::fragment<wmma::accumulator, TILE, TILE, TILE, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int base = 0; base < k; base += TILE) {
        wmma::load_matrix_sync(a, A + (size_t)tile_m * k + base, k);
        // b_step_k / b_step_n: how far one step along k / n moves in B's storage
        wmma::load_matrix_sync(b, B + (size_t)base * b_step_k + (size_t)tile_n * b_step_n,
                               b_step_k == 1 ? k : n);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(C + (size_t)tile_m * n + tile_n, acc, n, wmma::mem_row_major);
}

extern "C" __global__ void wmma_gemm(const half* A, const half* B, float* C, int m, int n, int k)
{
    wmma_tile<wmma::row_major>(A, B, C, m, n, k, n, 1);  // B[kk][nn] at kk * n + nn
}

extern "C" __global__ void wmma_gemm_bt(const half* A, const half* B, float* C, int m, int n, int k)
{
    wmma_tile<wmma::col_major>(A, B, C, m, n, k, 1, k);  // B[kk][nn] at nn * k + kk
}
