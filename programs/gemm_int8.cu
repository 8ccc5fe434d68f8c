// gemm_int8: C = A * B^T in int8 with int32 accumulators on tensor cores: mma.sync.m16n8k32 s8 x s8 -> s32
// (.satfinite: a sum beyond the int32 range clamps instead of wrapping). A is M x K row-major int8, B is
// N x K row-major int8 (mma's "col" B), C is M x N row-major int32. No shared memory: each lane loads its
// own fragment registers from global memory with the per-lane formulas of the PTX ISA ("Matrix Fragments
// for mma.m16n8k32", .s8): with g = lane / 4 and t = lane % 4,
//   A: a0 = row g, k 4t..4t+3;  a1 = row g+8;  a2 = row g, k 16+4t..;  a3 = row g+8, k 16+4t..
//   B: b0 = col g, k 4t..4t+3;  b1 = col g, k 16+4t..
//   C: c0, c1 = row g, cols 2t, 2t+1;  c2, c3 = row g+8, cols 2t, 2t+1
// Each warp computes a 16 x 32 tile of C (4 n8 tiles sharing one A fragment); a block of 4 warps covers
// 64 x 32. M must be a multiple of 16, N of 32 and K of 32. Launch grid (N / 32, ceil(M / 64)), 128 threads.
#include <cstdint>

#define WARP_TILES_N 4

__device__ __forceinline__ void mma_s8(int (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

extern "C" __global__ void gemm_int8(const int8_t* A, const int8_t* B, int* C, int m, int n, int k)
{
    const int lane = threadIdx.x % 32;
    const int g = lane / 4;
    const int t = lane % 4;
    const int row0 = (blockIdx.y * (blockDim.x / 32) + threadIdx.x / 32) * 16;
    const int col0 = blockIdx.x * 8 * WARP_TILES_N;
    if (row0 >= m) {
        return;  // the whole warp
    }
    int acc[WARP_TILES_N][4] = {};
    for (int base = 0; base < k; base += 32) {
        const int8_t* a_row = A + (size_t)(row0 + g) * k + base + 4 * t;
        uint32_t a[4];
        a[0] = *reinterpret_cast<const uint32_t*>(a_row);
        a[1] = *reinterpret_cast<const uint32_t*>(a_row + 8 * (size_t)k);
        a[2] = *reinterpret_cast<const uint32_t*>(a_row + 16);
        a[3] = *reinterpret_cast<const uint32_t*>(a_row + 8 * (size_t)k + 16);
#pragma unroll
        for (int j = 0; j < WARP_TILES_N; ++j) {
            const int8_t* b_col = B + (size_t)(col0 + 8 * j + g) * k + base + 4 * t;
            mma_s8(acc[j], a, *reinterpret_cast<const uint32_t*>(b_col),
                   *reinterpret_cast<const uint32_t*>(b_col + 16));
        }
    }
#pragma unroll
    for (int j = 0; j < WARP_TILES_N; ++j) {
        int* out = C + (size_t)(row0 + g) * n + col0 + 8 * j + 2 * t;
        out[0] = acc[j][0];
        out[1] = acc[j][1];
        out[8 * (size_t)n] = acc[j][2];
        out[8 * (size_t)n + 1] = acc[j][3];
    }
}
