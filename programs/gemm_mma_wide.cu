// gemm_mma_wide: C = A * B^T with mma.sync on block tiles wider than gemm_bf16_mma's 128 x 128, written here
// from the algorithm. A is M x K row-major, B is N x K row-major (mma's "col" B: a linear layer's weights),
// C is M x N row-major. K must be a multiple of 8 (16-byte cp.async chunks); any M and N (edge tiles are
// zero-filled, their stores guarded).
//
// Why wider tiles: a BM x BN block tile loads (BM + BN) x 2 bytes from L2 per K step and does 2 BM BN FLOPs
// with them, BM BN / (BM + BN) FLOP per L2 byte. 128 x 128 gives 64, 128 x 256 85, 256 x 256 128. On H100 the
// L2 (MT4G: ~2500 B/cycle, 18.9 per SM) feeds at 64 FLOP/B only 44 % of the rate mma.sync reaches, at 85
// 59 %, at 128 89 %. The accumulators bound the tile: 128 x 256 fp32 accumulators are 128 registers for
// each of 256 threads, and a 256 x 256 tile only fits with f16 accumulators (two per register), which is
// the other half of what mma.sync offers (m16n8k16 .f16.f16.f16.f16, at the same rate on sm_80/sm_90).
//
//   gemm_bf16_mma_128x256: bf16 in, fp32 accumulate, bf16 out (round to nearest even). 8 warps as 2 x 4,
//                          each a 64 x 64 piece (4 x 8 m16n8k16 tiles, 128 fp32 accumulators per thread).
//   gemm_f16_mma_256x256:  f16 in, f16 accumulate, f16 out. 8 warps as 2 x 4, each a 128 x 64 piece
//                          (8 x 8 tiles, 2 registers of two f16 each: 128 registers per thread).
//
// Both: K advances in slices of 64 elements (128 bytes per row); STAGES = 3 shared buffers (2 in the _2stage
// kernels) filled by cp.async.cg (16 bytes per request, src-size zero fill past the edges), STAGES - 1 slices
// in flight while one is computed (commit_group / wait_group STAGES - 2); ldmatrix.x4 loads the fragments,
// double-buffered in registers; shared rows are padded to 144 bytes so the 8 rows one ldmatrix matrix reads fall in 8 distinct groups of
// 4 banks. The buffers are dynamic shared memory: STAGES x (BM + BN) x 144 bytes (see the kernels at the end),
// more than the 48 KiB a block gets without opting in. The mainloop is described at its head.
// Launch: grid (ceil(N / BN), ceil(M / BM)), 256 threads, shared_bytes as above. The grid walks the N tiles of
// one M tile first, so the blocks that share an A tile run together.
#include <cstdint>
#include <cuda_bf16.h>

#include "mma_ptx.cuh"

#define THREADS 256
#define BK_BYTES 128                // one K slice: 64 16-bit elements per row (fewer barriers per K)
#define ROW_BYTES (BK_BYTES + 16)   // padded shared row
#define CHUNKS_PER_ROW (BK_BYTES / 16)

// bf16 x bf16 -> fp32: four fp32 accumulators per m16n8 tile per thread, element r at row g + 8 (r / 2),
// column 2 t + r % 2 (g = lane / 4, t = lane % 4)
struct Bf16F32 {
    typedef float Acc;
    static constexpr int ACC = 4;
    static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
    {
        mma_bf16_f32(d, a, b0, b1);
    }
    // row g + 8 h of the tile's accumulators as two bf16 (round to nearest even), column 2 t in the low half
    static __device__ __forceinline__ uint32_t pair(const float (&d)[4], int h)
    {
        return __bfloat16_as_ushort(__float2bfloat16_rn(d[2 * h]))
               | (uint32_t)__bfloat16_as_ushort(__float2bfloat16_rn(d[2 * h + 1])) << 16;
    }
};

// f16 x f16 -> f16: two registers per tile per thread, register r holding row g + 8 r, columns 2 t (low half)
// and 2 t + 1 (high half)
struct F16F16 {
    typedef uint32_t Acc;
    static constexpr int ACC = 2;
    static __device__ __forceinline__ void mma(uint32_t (&d)[2], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
                     "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};\n"
                     : "+r"(d[0]), "+r"(d[1])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
    static __device__ __forceinline__ uint32_t pair(const uint32_t (&d)[2], int h) { return d[h]; }
};

template <typename T, int BM, int BN, int STAGES>
__device__ __forceinline__ void gemm_tile(const uint8_t* A, const uint8_t* B, uint16_t* C, int m, int n, int k)
{
    constexpr int WARPS_N = 4;
    constexpr int WARP_M = BM / 2;   // 2 x 4 warps
    constexpr int WARP_N = BN / WARPS_N;
    constexpr int MI = WARP_M / 16;  // m16 tiles per warp
    constexpr int NI = WARP_N / 8;   // n8 tiles per warp
    static_assert(BM * CHUNKS_PER_ROW % THREADS == 0 && BN * CHUNKS_PER_ROW % THREADS == 0, "whole chunks");
    extern __shared__ __align__(128) uint8_t shared[];
    uint8_t (*a_tile)[BM][ROW_BYTES] = reinterpret_cast<uint8_t (*)[BM][ROW_BYTES]>(shared);
    uint8_t (*b_tile)[BN][ROW_BYTES] = reinterpret_cast<uint8_t (*)[BN][ROW_BYTES]>(shared + STAGES * BM * ROW_BYTES);
    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int warp_row = (warp / WARPS_N) * WARP_M;
    const int warp_col = (warp % WARPS_N) * WARP_N;
    const int first_row = blockIdx.y * BM;
    const int first_col = blockIdx.x * BN;
    const size_t row_bytes = (size_t)k * 2;  // one row of A or B in global memory
    const int k_bytes = k * 2;
    const int slices = (k_bytes + BK_BYTES - 1) / BK_BYTES;

    // One cp.async "piece" per thread: chunk tid + piece x THREADS of the slice, A's BM x 4 chunks first, then
    // B's BN x 4. A thread's chunk of a piece is 16 bytes (tid % 4) of row tid / 4 + q x 64 (q: the piece's
    // index within A or B). What does not change from slice to slice (the rows' addresses, which rows exist,
    // the shared offsets) is computed once here, so a refill is a handful of instructions per piece and no
    // branch: a missing row, a chunk past K and a refill past the last slice are all src-size 0 (16 zero bytes
    // into a buffer no later slice reads).
    constexpr int A_PIECES = BM * CHUNKS_PER_ROW / THREADS;
    constexpr int PIECES = (BM + BN) * CHUNKS_PER_ROW / THREADS;
    constexpr int ROWS_PER_PIECE = THREADS / CHUNKS_PER_ROW;
    constexpr int A_STAGE_BYTES = BM * ROW_BYTES;
    constexpr int B_STAGE_BYTES = BN * ROW_BYTES;
    const int chunk_row = tid / CHUNKS_PER_ROW;
    const int chunk_byte = (tid % CHUNKS_PER_ROW) * 16;
    const uint32_t shared_base = shared_address(shared) + chunk_row * ROW_BYTES + chunk_byte;
    const size_t piece_stride = ROWS_PER_PIECE * row_bytes;
    const uint8_t* a_thread = A + (size_t)(first_row + chunk_row) * row_bytes + chunk_byte;
    const uint8_t* b_thread = B + (size_t)(first_col + chunk_row) * row_bytes + chunk_byte;
    uint32_t rows_present = 0;  // bit p: this thread's row of piece p exists
#pragma unroll
    for (int piece = 0; piece < PIECES; ++piece) {
        const bool is_a = piece < A_PIECES;
        const int global_row = (is_a ? first_row : first_col) + chunk_row
                               + (is_a ? piece : piece - A_PIECES) * ROWS_PER_PIECE;
        rows_present |= (global_row < (is_a ? m : n) ? 1u : 0u) << piece;
    }
    // The refill of one slice: where it reads and writes, and which of its pieces are real
    struct Refill {
        const uint8_t* a_source;
        const uint8_t* b_source;
        uint32_t a_destination;
        uint32_t b_destination;
        uint32_t present;
    };
    auto refill_of = [&](int slice, bool wanted) {
        const int stage = slice % STAGES;
        Refill r;
        r.a_source = a_thread + slice * BK_BYTES;
        r.b_source = b_thread + slice * BK_BYTES;
        r.a_destination = shared_base + stage * A_STAGE_BYTES;
        r.b_destination = shared_base + STAGES * A_STAGE_BYTES + stage * B_STAGE_BYTES;
        r.present = (wanted && slice * BK_BYTES + chunk_byte < k_bytes) ? rows_present : 0;
        return r;
    };
    auto load_piece = [&](const Refill& r, int piece) {
        const bool is_a = piece < A_PIECES;
        const int q = is_a ? piece : piece - A_PIECES;
        const bool present = (r.present >> piece) & 1;
        const uint8_t* source = (is_a ? r.a_source : r.b_source) + q * piece_stride;
        const uint32_t destination = (is_a ? r.a_destination : r.b_destination) + q * ROWS_PER_PIECE * ROW_BYTES;
        cp_async_16(destination, present ? source : A, present ? 16 : 0);
    };
    auto load_slice = [&](int slice) {
        const Refill r = refill_of(slice, slice < slices);
#pragma unroll
        for (int piece = 0; piece < PIECES; ++piece) {
            load_piece(r, piece);
        }
    };

    typename T::Acc acc[MI][NI][T::ACC];
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int j = 0; j < NI; ++j) {
#pragma unroll
            for (int r = 0; r < T::ACC; ++r) {
                acc[i][j][r] = 0;
            }
        }
    }

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        load_slice(s);
        cp_async_commit();
    }
    // ldmatrix lane addresses: A 16 x 32-byte tile, lane -> row lane % 16, bytes 16 * (lane / 16);
    // B two n8 tiles x 32 bytes, lane -> row lane % 8 + 8 * (lane / 16), bytes 16 * ((lane / 8) % 2)
    const int a_row = warp_row + lane % 16;
    const int a_byte = 16 * (lane / 16);
    const int b_row = warp_col + lane % 8 + 8 * (lane / 16);
    const int b_byte = 16 * ((lane / 8) % 2);
    // Fragments, double-buffered: the A fragment of one m16 row of mma.syncs (a row is NI mma.syncs sharing
    // it) and the B fragments of one 16-element K step; the next row's A and the next K step's B are loaded
    // while this row's mma.syncs run, so no mma.sync waits for an ldmatrix.
    uint32_t a_frag[2][4];
    uint32_t b_frag[2][NI / 2][4];
    auto load_a = [&](uint32_t (&frag)[4], int stage, int row) {
        ldmatrix_x4(frag, shared_address(&a_tile[stage][a_row + 16 * (row % MI)][32 * (row / MI) + a_byte]));
    };
    auto load_b = [&](uint32_t (&frag)[NI / 2][4], int stage, int kk) {
#pragma unroll
        for (int j = 0; j < NI / 2; ++j) {
            ldmatrix_x4(frag[j], shared_address(&b_tile[stage][b_row + 16 * j][32 * kk + b_byte]));
        }
    };
    cp_async_wait<STAGES - 2>();  // slice 0 has landed (for this thread) ...
    __syncthreads();               // ... and for every thread
    load_b(b_frag[0], 0, 0);
    load_a(a_frag[0], 0, 0);

    // The main loop, as CUTLASS's multistage mainloop interleaves it. Per slice, ROWS rows of NI mma.syncs;
    // before each row's mma.syncs go the next row's ldmatrix (the next slice's first, once the barrier has
    // seen that slice land, at the last row); after it, one piece of the refill of the stage the previous
    // slice used (the barrier of the previous slice's last row has seen every warp finish reading it), so a
    // warp's address arithmetic and cp.async issue while the tensor pipe works through the row. The two warps
    // of a sub-partition (warp and warp + 4) place their pieces at opposite ends of the slice, so while one
    // issues its refill the other has only mma.syncs to issue and keeps the pipe busy.
    constexpr int ROWS = (BK_BYTES / 32) * MI;  // m16 rows of mma.syncs per slice
    constexpr int LATE = ROWS - 1 - PIECES;     // the second warp of a sub-partition issues piece p after row p + LATE
    static_assert(PIECES <= ROWS - 1, "every piece of the refill goes out before the slice's last row");
    static_assert(ROWS % 2 == 0, "row r uses a_frag[r % 2] in every slice");
    const bool late = warp >= 4;
    for (int slice = 0; slice < slices; ++slice) {
        const int stage = slice % STAGES;
        const int next = slice + STAGES - 1;
        const Refill refill = refill_of(next, next < slices);
#pragma unroll
        for (int row = 0; row < ROWS; ++row) {
            const int kk = row / MI;
            if (row + 1 < ROWS) {
                if (row % MI == MI - 1) {
                    load_b(b_frag[(kk + 1) % 2], stage, kk + 1);
                }
                load_a(a_frag[(row + 1) % 2], stage, row + 1);
            } else {
                cp_async_commit();                // this slice's refill (empty past the end)
                if (slice + 1 < slices) {
                    cp_async_wait<STAGES - 2>();  // slice + 1 has landed (for this thread) ...
                    __syncthreads();               // ... and for every thread
                    load_b(b_frag[0], (slice + 1) % STAGES, 0);
                    load_a(a_frag[0], (slice + 1) % STAGES, 0);
                }
            }
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                T::mma(acc[row % MI][j], a_frag[row % 2], b_frag[kk % 2][j / 2][2 * (j % 2)],
                       b_frag[kk % 2][j / 2][2 * (j % 2) + 1]);
            }
            if (!late && row < PIECES) {
                load_piece(refill, row);
            }
            if (late && row >= LATE && row < LATE + PIECES) {
                load_piece(refill, row - LATE);
            }
        }
    }
    cp_async_wait<0>();

    // Epilogue through shared memory, as CUTLASS's: each thread's 32-bit pairs go to the C tile in the
    // (now idle) pipeline buffers, rows padded by 16 bytes (a row is 132 words: the 8 rows x 4 threads of one
    // store hit 32 distinct banks); then each warp writes whole rows of C, 16 bytes per thread, so every
    // 32-byte sector it writes to L2 is full (the pairs written directly would fill half of each).
    constexpr int OUT_ROW_BYTES = BN * 2 + 16;
    constexpr int OUT_CHUNKS = BN * 2 / 16;  // 16-byte chunks per row of the C tile
    static_assert(BM * OUT_ROW_BYTES <= STAGES * (BM + BN) * ROW_BYTES, "the C tile fits in the buffers");
    static_assert(STAGES >= 2, "at least double buffering");
    __syncthreads();  // every warp has read its last fragments
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int j = 0; j < NI; ++j) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = warp_row + 16 * i + lane / 4 + 8 * h;
                const int col = warp_col + 8 * j + 2 * (lane % 4);
                *reinterpret_cast<uint32_t*>(shared + row * OUT_ROW_BYTES + col * 2) = T::pair(acc[i][j], h);
            }
        }
    }
    __syncthreads();
#pragma unroll 4
    for (int chunk = tid; chunk < BM * OUT_CHUNKS; chunk += THREADS) {
        const int row = first_row + chunk / OUT_CHUNKS;
        const int col = first_col + (chunk % OUT_CHUNKS) * 8;
        if (row < m && col < n) {
            const uint4 v = *reinterpret_cast<const uint4*>(shared + (chunk / OUT_CHUNKS) * OUT_ROW_BYTES
                                                            + (chunk % OUT_CHUNKS) * 16);
            uint16_t* out = C + (size_t)row * n + col;
            if (n % 8 == 0 && col + 8 <= n) {
                *reinterpret_cast<uint4*>(out) = v;  // 16-byte aligned: n % 8 == 0 and col % 8 == 0
            } else {
                const uint16_t* e = reinterpret_cast<const uint16_t*>(&v);
#pragma unroll
                for (int q = 0; q < 8; ++q) {
                    if (col + q < n) {
                        out[q] = e[q];
                    }
                }
            }
        }
    }
}

// shared_bytes: STAGES x (BM + BN) x ROW_BYTES. 3 stages: 165888 (128 x 256) and 221184 (256 x 256), which
// H100 allows a block (227 KB); the _2stage kernels (110592 and 147456: double buffering, one slice in flight)
// are for A100's 163 KB.
template <typename T, int BM, int BN, int STAGES>
__device__ __forceinline__ void gemm(const uint16_t* A, const uint16_t* B, uint16_t* C, int m, int n, int k)
{
    gemm_tile<T, BM, BN, STAGES>(reinterpret_cast<const uint8_t*>(A), reinterpret_cast<const uint8_t*>(B), C, m, n, k);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_bf16_mma_128x256(const uint16_t* A, const uint16_t* B, uint16_t* C, int m, int n, int k)
{
    gemm<Bf16F32, 128, 256, 3>(A, B, C, m, n, k);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_f16_mma_256x256(const uint16_t* A, const uint16_t* B, uint16_t* C, int m, int n, int k)
{
    gemm<F16F16, 256, 256, 3>(A, B, C, m, n, k);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_bf16_mma_128x256_2stage(const uint16_t* A, const uint16_t* B, uint16_t* C, int m, int n, int k)
{
    gemm<Bf16F32, 128, 256, 2>(A, B, C, m, n, k);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_f16_mma_256x256_2stage(const uint16_t* A, const uint16_t* B, uint16_t* C, int m, int n, int k)
{
    gemm<F16F16, 256, 256, 2>(A, B, C, m, n, k);
}
