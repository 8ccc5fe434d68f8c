// gemm_bf16_mma: C = A * B^T, CUTLASS-style, written here from the algorithm: BF16 inputs, FP32 accumulators.
// A is M x K row-major, B is N x K row-major (K x N column-major: mma's "col" B; the layout of a linear
// layer's weights, y = x W^T), C is M x N row-major fp32. K must be a multiple of 8 (16-byte chunks); any
// M and N (edge tiles are zero-filled).
//
// A block of 4 warps computes a BM x BN = 128 x 128 tile of C, each warp a 64 x 64 piece of it as
// 4 x 8 mma.sync.m16n8k16 tiles (128 fp32 accumulators per thread). K advances in slices of BK = 32:
// the A and B slices go global -> shared with cp.async (16 bytes per request, zero-fill past the edges)
// into one of STAGES shared buffers while the warps compute on another (commit_group / wait_group keep
// STAGES - 1 slices in flight); ldmatrix.x4 loads the fragments from shared memory; shared rows are padded
// by 16 bytes so that the 8 rows an ldmatrix matrix reads fall in 8 distinct groups of 4 banks (row strides of
// 80 and 48 bytes both do).
//
// The same tile, in bytes, serves the 8-bit types: an m16n8k32 s8 or e4m3 mma consumes 32 bytes of K per
// row, as m16n8k16 bf16 does, so ldmatrix's b16 view loads their fragments unchanged (PTX ISA, "Matrix
// Fragments for mma.m16n8k32"). gemm_s8_mma accumulates in s32 (C is int32), gemm_e4m3_mma in fp32.
// The *_4stage kernels (the labs') keep 3 slices in flight instead of 1 and write bf16 outputs (see below).
// Launch: grid (ceil(N / 128), ceil(M / 128)), 128 threads, no dynamic shared memory. The grid walks the
// N tiles of one M tile first, so the blocks that share an A tile run together.
#include <cstdint>
#include <cuda_bf16.h>

#include "mma_ptx.cuh"

#define BM 128
#define BN 128
#define THREADS 128
#define WARP_M 64
#define WARP_N 64
#define MI (WARP_M / 16)               // m16 tiles per warp
#define NI (WARP_N / 8)                // n8 tiles per warp

struct Bf16 {
    typedef float Acc;
    static constexpr int BYTES = 2;
    static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
    {
        mma_bf16_f32(d, a, b0, b1);
    }
};

struct S8 {
    typedef int Acc;
    static constexpr int BYTES = 1;
    static __device__ __forceinline__ void mma(int (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

struct E4m3 {
    typedef float Acc;
    static constexpr int BYTES = 1;
    static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

__device__ __forceinline__ void store(float* out, float value) { *out = value; }
__device__ __forceinline__ void store(int* out, int value) { *out = value; }
__device__ __forceinline__ void store(uint16_t* out, float value)
{
    *out = __bfloat16_as_ushort(__float2bfloat16_rn(value));
}

// BK_BYTES: one K slice per stage, 64 bytes (32 bf16 or 64 8-bit elements per row) or 32; rows padded by 16 bytes
template <typename T, int STAGES, int BK_BYTES, typename Out>
__device__ __forceinline__ void gemm_tile(const uint8_t* A, const uint8_t* B, Out* C, int m, int n, int k)
{
    constexpr int ROW_BYTES = BK_BYTES + 16;
    constexpr int CHUNKS_PER_ROW = BK_BYTES / 16;
    static_assert(BK_BYTES % 32 == 0 && STAGES >= 2, "a slice holds whole mma K steps; at least two stages");
    __shared__ __align__(128) uint8_t a_tile[STAGES][BM][ROW_BYTES];
    __shared__ __align__(128) uint8_t b_tile[STAGES][BN][ROW_BYTES];
    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int warp_row = (warp / 2) * WARP_M;
    const int warp_col = (warp % 2) * WARP_N;
    const int first_row = blockIdx.y * BM;
    const int first_col = blockIdx.x * BN;
    const size_t row_bytes = (size_t)k * T::BYTES;  // one row of A or B in global memory
    const int k_bytes = k * T::BYTES;
    const int slices = (k_bytes + BK_BYTES - 1) / BK_BYTES;

    // slice s of A and B -> stage buffer: BM * CHUNKS_PER_ROW 16-byte chunks each, spread over the threads
    auto load_slice = [&](int slice, int stage) {
#pragma unroll
        for (int i = 0; i < BM * CHUNKS_PER_ROW / THREADS; ++i) {
            int chunk = tid + i * THREADS;
            int row = chunk / CHUNKS_PER_ROW;
            int byte = slice * BK_BYTES + (chunk % CHUNKS_PER_ROW) * 16;
            int bytes_a = (first_row + row < m && byte < k_bytes) ? 16 : 0;
            int bytes_b = (first_col + row < n && byte < k_bytes) ? 16 : 0;
            const uint8_t* source_a = bytes_a ? A + (first_row + row) * row_bytes + byte : A;
            const uint8_t* source_b = bytes_b ? B + (first_col + row) * row_bytes + byte : B;
            cp_async_16(shared_address(&a_tile[stage][row][(chunk % CHUNKS_PER_ROW) * 16]), source_a, bytes_a);
            cp_async_16(shared_address(&b_tile[stage][row][(chunk % CHUNKS_PER_ROW) * 16]), source_b, bytes_b);
        }
    };

    typename T::Acc acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int j = 0; j < NI; ++j) {
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                acc[i][j][r] = 0;
            }
        }
    }

    // prologue: STAGES - 1 slices in flight
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < slices) {
            load_slice(s, s);
        }
        cp_async_commit();
    }
    // ldmatrix lane addresses: A 16 x 32-byte tile, lane -> row lane % 16, bytes 16 * (lane / 16);
    // B two n8 tiles x 32 bytes, lane -> row lane % 8 + 8 * (lane / 16), bytes 16 * ((lane / 8) % 2)
    const int a_row = warp_row + lane % 16;
    const int a_byte = 16 * (lane / 16);
    const int b_row = warp_col + lane % 8 + 8 * (lane / 16);
    const int b_byte = 16 * ((lane / 8) % 2);

    for (int slice = 0; slice < slices; ++slice) {
        cp_async_wait<STAGES - 2>();  // slice `slice` has landed (for this thread) ...
        __syncthreads();               // ... and for every thread; the buffer refilled below is free
        int next = slice + STAGES - 1;
        if (next < slices) {
            load_slice(next, next % STAGES);
        }
        cp_async_commit();
        const int stage = slice % STAGES;
#pragma unroll
        for (int kk = 0; kk < BK_BYTES; kk += 32) {
            uint32_t a[MI][4];
            uint32_t b[NI / 2][4];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                ldmatrix_x4(a[i], shared_address(&a_tile[stage][a_row + 16 * i][kk + a_byte]));
            }
#pragma unroll
            for (int j = 0; j < NI / 2; ++j) {
                ldmatrix_x4(b[j], shared_address(&b_tile[stage][b_row + 16 * j][kk + b_byte]));
            }
#pragma unroll
            for (int i = 0; i < MI; ++i) {
#pragma unroll
                for (int j = 0; j < NI; ++j) {
                    T::mma(acc[i][j], a[i], b[j / 2][2 * (j % 2)], b[j / 2][2 * (j % 2) + 1]);
                }
            }
        }
    }
    cp_async_wait<0>();

    // epilogue: accumulator r of tile (i, j) is C[row g (+8 for r >= 2)][col 2t + r % 2], g = lane / 4, t = lane % 4
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int j = 0; j < NI; ++j) {
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                int row = first_row + warp_row + 16 * i + lane / 4 + 8 * (r / 2);
                int col = first_col + warp_col + 8 * j + 2 * (lane % 4) + r % 2;
                if (row < m && col < n) {
                    store(&C[(size_t)row * n + col], acc[i][j][r]);
                }
            }
        }
    }
}

// The program's kernels: double buffering (2 stages of 64-byte K slices, 40 KiB of shared memory)
extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_bf16_mma(const uint16_t* A, const uint16_t* B, float* C, int m, int n, int k)
{
    gemm_tile<Bf16, 2, 64>(reinterpret_cast<const uint8_t*>(A), reinterpret_cast<const uint8_t*>(B), C, m, n, k);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_s8_mma(const int8_t* A, const int8_t* B, int* C, int m, int n, int k)
{
    gemm_tile<S8, 2, 64>(reinterpret_cast<const uint8_t*>(A), reinterpret_cast<const uint8_t*>(B), C, m, n, k);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_e4m3_mma(const uint8_t* A, const uint8_t* B, float* C, int m, int n, int k)
{
    gemm_tile<E4m3, 2, 64>(A, B, C, m, n, k);
}

// The labs' kernels (gpusim/labs/tensor_gemm.py): 4 stages of 32-byte K slices (48 KiB, the most static shared
// memory a block may have), so 3 slices are in flight while one is computed: enough to cover a DRAM latency
// (834 cycles on H100) with the 192 mma-pipe cycles per slice per warp; 2 stages leave it exposed on every
// slice whose A tile comes from DRAM. Floating-point outputs in bf16 (round to nearest even), as a layer
// that feeds the next one writes them.
extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_bf16_mma_4stage(const uint16_t* A, const uint16_t* B, uint16_t* C, int m, int n, int k)
{
    gemm_tile<Bf16, 4, 32>(reinterpret_cast<const uint8_t*>(A), reinterpret_cast<const uint8_t*>(B), C, m, n, k);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_s8_mma_4stage(const int8_t* A, const int8_t* B, int* C, int m, int n, int k)
{
    gemm_tile<S8, 4, 32>(reinterpret_cast<const uint8_t*>(A), reinterpret_cast<const uint8_t*>(B), C, m, n, k);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_e4m3_mma_4stage(const uint8_t* A, const uint8_t* B, uint16_t* C, int m, int n, int k)
{
    gemm_tile<E4m3, 4, 32>(A, B, C, m, n, k);
}
