// Attention kernels for the `flash-attention` lab, written here from the algorithm: O = softmax(scale Q K^T) V
// for one head of dimension 64 per blockIdx.y / blockIdx.z, fp16 inputs, fp32 accumulators (mma.sync
// m16n8k16 .f32.f16.f16.f32), fp16 output; causal != 0 masks each row's future keys (attn_scores writes -inf
// there, attn_flash skips the key tiles past its Q tile and masks the ones that straddle the diagonal). Q, K, V
// and O are [heads][n][64] row-major fp16; the sequence length n must be a multiple of 64 (one tile) for the
// naive kernels, of 128 for attn_flash.
//
// The naive path writes the scores to DRAM and reads them back, as three framework kernels do:
//   attn_scores : S = scale Q K^T, fp32, [heads][n][n]. Grid (n / 64, n / 64, heads): one 64 x 64 tile of S per
//                 block (Q tile blockIdx.y, K tile blockIdx.x).
//   attn_softmax: P = softmax(S) along each row, fp16, [heads][n][n]. One block per row (grid heads x n) of
//                 n / 16 threads rounded up to a warp (4 float4 each; at least 32, at most 256), the row held in
//                 registers (n <= 8192: up to 8 float4 per thread): S read once, P written once.
//   attn_pv     : O = P V. Grid (n / 64, heads): 64 rows of O per block, 64-key tiles of P and V in shared
//                 memory (double-buffered cp.async).
// The fused path (FlashAttention-2's loop) never writes S or P:
//   attn_flash  : grid (n / 128, heads), 256 threads; a block's 8 warps each own 16 rows of a 128-row Q tile,
//                 whose mma.sync fragments stay in registers. Per 64-key tile of K and V (double-buffered in
//                 shared memory by cp.async): S = Q K^T into registers (32 mma.syncs per warp), the online
//                 softmax (running row max m and sum l in log2 units; the O accumulators rescaled by
//                 2^(m_old - m_new)), P converted in registers to fp16 A fragments (the m16n8 accumulator layout
//                 is the m16n8k16 A layout), O += P V (32 mma.syncs). At the end O / l goes out through shared
//                 memory in 16-byte pieces of rows. Per 64-key tile a 128-row Q tile does 2 x (2 x 128 x 64 x 64)
//                 FLOPs with the 2 x 64 x 128 bytes of K and V it reads from L2, 128 FLOP per L2 byte (64 with
//                 64 rows): on h100-sxm's 18.9 L2 bytes per cycle per SM that caps it at 89 % of the mma.sync
//                 rate instead of 44 %.
// Launch attn_scores and attn_pv with 128 threads, attn_flash with 256, attn_softmax as above. Shared tiles are
// 64 rows of 128 bytes padded to 144, so the 8 rows an ldmatrix matrix reads fall in 8 distinct groups of 4 banks.
#include <cstdint>
#include <cuda_fp16.h>

#include "../mma_ptx.cuh"

#define THREADS 128
#define TILE 64                       // rows of a Q, K, V or P tile, and the head dimension
#define ROW_BYTES (TILE * 2 + 16)     // a padded shared row of 64 fp16
#define TILE_BYTES (TILE * ROW_BYTES)
// attn_flash: m16 tiles (16 rows each) per warp. 2 (4 warps of 32 rows) halves the ldmatrix bytes per mma.sync
// but takes 255 registers, 2 blocks (8 warps) per SM: in gpusim that ran latency-bound, 36 % tensor-pipe busy
// against 47 % for 1 (8 warps of 16 rows, 128 registers, 16 warps per SM)
#ifndef FLASH_MT
#define FLASH_MT 1
#endif
#define FLASH_THREADS (256 / FLASH_MT)
#define FLASH_ROWS (FLASH_THREADS / 32 * 16 * FLASH_MT)   // 128
#define SOFTMAX_THREADS 256
#define SOFTMAX_CHUNKS 8              // float4 per thread: rows up to 256 x 4 x 8 = 8192
#define LOG2E 1.4426950408889634f

// d += a b: one m16n8k16 tile, f16 inputs, fp32 accumulators
__device__ __forceinline__ void mma_f16_f32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

__device__ __forceinline__ float exp2_approx(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ uint32_t pack_half2(float low, float high)
{
    __half2 h = __floats2half2_rn(low, high);
    return *reinterpret_cast<uint32_t*>(&h);
}

// A 64-row tile of 128 bytes per row (global row stride row_bytes) into a padded shared tile: 512 cp.async of
// 16 bytes, 512 / BLOCK_THREADS per thread; a warp's 32 requests cover 4 whole rows
template <int BLOCK_THREADS = THREADS>
__device__ __forceinline__ void load_tile(uint32_t tile, const uint8_t* source, size_t row_bytes)
{
#pragma unroll
    for (int i = 0; i < TILE * 8 / BLOCK_THREADS; ++i) {
        const int chunk = threadIdx.x + i * BLOCK_THREADS;
        const int row = chunk / 8;
        const int byte = (chunk % 8) * 16;
        cp_async_16(tile + row * ROW_BYTES + byte, source + row * row_bytes + byte, 16);
    }
}

// The A fragments of this warp's MT x 16 rows of a shared tile (m16 tile mt: rows 16 (MT w + mt) ..), for the 4
// k-steps of 16 columns
template <int MT>
__device__ __forceinline__ void load_a_fragments(uint32_t (&a)[MT][4][4], uint32_t tile)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
        const int row = ((threadIdx.x / 32) * MT + mt) * 16 + lane % 16;
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
            ldmatrix_x4(a[mt][kk], tile + row * ROW_BYTES + 32 * kk + 16 * (lane / 16));
        }
    }
}

template <int MT>
__device__ __forceinline__ void zero(float (&acc)[MT][8][4])
{
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                acc[mt][j][r] = 0.0f;
            }
        }
    }
}

// s = q k^T for this warp's rows and the 64 keys of a shared K tile: n-tile j holds keys 8 j .. 8 j + 7. K is
// mma's "col" B as stored (keys x dims), so plain ldmatrix gives the B fragments of two n-tiles at once; each
// B fragment serves the warp's MT m16 tiles
template <int MT>
__device__ __forceinline__ void scores_tile(float (&s)[MT][8][4], const uint32_t (&q)[MT][4][4], uint32_t k_tile)
{
    const int lane = threadIdx.x % 32;
    const int row = lane % 8 + 8 * (lane / 16);
    const int byte = 16 * ((lane / 8) % 2);
    zero(s);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {  // a k-step's 4 ldmatrix first, so that they are in flight together
        uint32_t b[4][4];
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
            ldmatrix_x4(b[jj], k_tile + (16 * jj + row) * ROW_BYTES + 32 * kk + byte);
        }
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) {
                mma_f16_f32(s[mt][2 * jj], q[mt][kk], b[jj][0], b[jj][1]);
                mma_f16_f32(s[mt][2 * jj + 1], q[mt][kk], b[jj][2], b[jj][3]);
            }
        }
    }
}

// o += p v for this warp's rows: p as A fragments over the tile's 64 keys, V (keys x dims, row-major) read
// transposed by ldmatrix.trans into the B fragments of dims 16 jj .. 16 jj + 15
template <int MT>
__device__ __forceinline__ void pv_tile(float (&o)[MT][8][4], const uint32_t (&p)[MT][4][4], uint32_t v_tile)
{
    const int lane = threadIdx.x % 32;
    const int row = lane % 8 + 8 * ((lane / 8) % 2);
    const int byte = 16 * (lane / 16);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
        uint32_t b[4][4];
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
            ldmatrix_x4_trans(b[jj], v_tile + (16 * kk + row) * ROW_BYTES + 32 * jj + byte);
        }
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) {
                mma_f16_f32(o[mt][2 * jj], p[mt][kk], b[jj][0], b[jj][1]);
                mma_f16_f32(o[mt][2 * jj + 1], p[mt][kk], b[jj][2], b[jj][3]);
            }
        }
    }
}

// This warp's MT x 16 rows of O (divided by the row sums) as fp16, staged through its rows of a shared tile so
// that every store is a 16-byte piece of a row (a warp writes 4 whole 128-byte rows per instruction)
template <int MT>
__device__ __forceinline__ void store_output(const float (&o)[MT][8][4], const float (&l)[MT][2], uint8_t* staging,
                                             uint16_t* out)
{
    const int lane = threadIdx.x % 32;
    const int first = (threadIdx.x / 32) * MT * 16;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = first + 16 * mt + lane / 4 + 8 * h;
                *reinterpret_cast<uint32_t*>(staging + row * ROW_BYTES + (8 * j + 2 * (lane % 4)) * 2)
                    = pack_half2(o[mt][j][2 * h] / l[mt][h], o[mt][j][2 * h + 1] / l[mt][h]);
            }
        }
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < 4 * MT; ++i) {
        const int row = first + i * 4 + lane / 8;
        const int byte = (lane % 8) * 16;
        *reinterpret_cast<uint4*>(reinterpret_cast<uint8_t*>(out) + row * TILE * 2 + byte)
            = *reinterpret_cast<const uint4*>(staging + row * ROW_BYTES + byte);
    }
}

// The causal mask on one m16 x 64 tile of scores (rows first_row + g + 8 h, keys first_key + 8 j + 2 t + e): keys
// after a row's own position become -inf, which the softmax turns into 0
__device__ __forceinline__ void mask_future(float (&s)[8][4], int first_row, int first_key)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            if (first_key + 8 * j + 2 * (lane % 4) + r % 2 > first_row + lane / 4 + 8 * (r / 2)) {
                s[j][r] = -INFINITY;
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    attn_scores(const uint16_t* Q, const uint16_t* K, float* S, int n, float scale, int causal)
{
    __shared__ __align__(128) uint8_t tiles[2 * TILE_BYTES];
    const size_t head = (size_t)blockIdx.z * n * TILE;
    const uint32_t q_tile = shared_address(tiles);
    const uint32_t k_tile = q_tile + TILE_BYTES;
    load_tile(q_tile, reinterpret_cast<const uint8_t*>(Q + head + (size_t)blockIdx.y * TILE * TILE), TILE * 2);
    load_tile(k_tile, reinterpret_cast<const uint8_t*>(K + head + (size_t)blockIdx.x * TILE * TILE), TILE * 2);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    uint32_t q[1][4][4];
    float s[1][8][4];
    load_a_fragments(q, q_tile);
    scores_tile(s, q, k_tile);
    if (causal && blockIdx.x >= blockIdx.y) {  // the diagonal tile and those above it
        mask_future(s[0], blockIdx.y * TILE + (threadIdx.x / 32) * 16, blockIdx.x * TILE);
    }
    const int lane = threadIdx.x % 32;
    const size_t first_row = (size_t)blockIdx.y * TILE + (threadIdx.x / 32) * 16 + lane / 4;
    float* out = S + (size_t)blockIdx.z * n * n + first_row * n + blockIdx.x * TILE + 2 * (lane % 4);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            *reinterpret_cast<float2*>(out + (size_t)8 * h * n + 8 * j)
                = make_float2(scale * s[0][j][2 * h], scale * s[0][j][2 * h + 1]);
        }
    }
}

__device__ __forceinline__ float block_reduce(float value, float* scratch, bool is_max)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        const float other = __shfl_xor_sync(0xffffffffu, value, offset);
        value = is_max ? fmaxf(value, other) : value + other;
    }
    __syncthreads();  // the previous reduction's readers are done with scratch
    if (lane == 0) {
        scratch[threadIdx.x / 32] = value;
    }
    __syncthreads();
    value = scratch[0];
    for (int w = 1; w < blockDim.x / 32; ++w) {
        value = is_max ? fmaxf(value, scratch[w]) : value + scratch[w];
    }
    return value;
}

extern "C" __global__ void __launch_bounds__(SOFTMAX_THREADS)
    attn_softmax(const float* S, uint16_t* P, int n)
{
    __shared__ float scratch[SOFTMAX_THREADS / 32];
    const int threads = blockDim.x;  // 32 .. SOFTMAX_THREADS, a multiple of 32
    const float4* row = reinterpret_cast<const float4*>(S + (size_t)blockIdx.x * n);
    uint2* out = reinterpret_cast<uint2*>(P + (size_t)blockIdx.x * n);
    const int vectors = n / 4;
    const int chunks = (vectors + threads - 1) / threads;  // the same for the whole block
    float4 x[SOFTMAX_CHUNKS];
#pragma unroll
    for (int c = 0; c < SOFTMAX_CHUNKS; ++c) {  // every load issued before the first use: all in flight together
        const int i = threadIdx.x + c * threads;
        x[c] = c < chunks && i < vectors ? row[i] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    }
    float local_max = -INFINITY;
#pragma unroll
    for (int c = 0; c < SOFTMAX_CHUNKS; ++c) {
        if (c >= chunks) {
            break;  // a uniform branch: rows shorter than the block's 8 chunks skip the empty ones
        }
        local_max = fmaxf(local_max, fmaxf(fmaxf(x[c].x, x[c].y), fmaxf(x[c].z, x[c].w)));
    }
    const float shift = block_reduce(local_max, scratch, true) * LOG2E;
    float local_sum = 0.0f;
#pragma unroll
    for (int c = 0; c < SOFTMAX_CHUNKS; ++c) {
        if (c >= chunks) {
            break;
        }
        x[c] = make_float4(exp2_approx(x[c].x * LOG2E - shift), exp2_approx(x[c].y * LOG2E - shift),
                           exp2_approx(x[c].z * LOG2E - shift), exp2_approx(x[c].w * LOG2E - shift));
        local_sum += (x[c].x + x[c].y) + (x[c].z + x[c].w);
    }
    const float inverse = 1.0f / block_reduce(local_sum, scratch, false);
#pragma unroll
    for (int c = 0; c < SOFTMAX_CHUNKS; ++c) {
        const int i = threadIdx.x + c * threads;
        if (c < chunks && i < vectors) {
            out[i] = make_uint2(pack_half2(x[c].x * inverse, x[c].y * inverse),
                                pack_half2(x[c].z * inverse, x[c].w * inverse));
        }
    }
}

// The key tile `tile` of K (or P's column tile) and V into stage `tile % 2` of the double buffer
template <int BLOCK_THREADS = THREADS>
__device__ __forceinline__ void load_kv(uint32_t stages, const uint8_t* a, size_t a_row_bytes, size_t a_step,
                                        const uint8_t* v, int tile)
{
    const uint32_t stage = stages + (tile % 2) * 2 * TILE_BYTES;
    load_tile<BLOCK_THREADS>(stage, a + tile * a_step, a_row_bytes);
    load_tile<BLOCK_THREADS>(stage + TILE_BYTES, v + (size_t)tile * TILE * TILE * 2, TILE * 2);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    attn_pv(const uint16_t* P, const uint16_t* V, uint16_t* O, int n)
{
    __shared__ __align__(128) uint8_t tiles[4 * TILE_BYTES];
    const uint32_t stages = shared_address(tiles);
    const uint8_t* p_rows = reinterpret_cast<const uint8_t*>(P + ((size_t)blockIdx.y * n + blockIdx.x * TILE) * n);
    const uint8_t* v = reinterpret_cast<const uint8_t*>(V + (size_t)blockIdx.y * n * TILE);
    const int tiles_n = n / TILE;
    float o[1][8][4];
    zero(o);
    load_kv(stages, p_rows, (size_t)n * 2, TILE * 2, v, 0);
    cp_async_commit();
    for (int t = 0; t < tiles_n; ++t) {
        if (t + 1 < tiles_n) {
            load_kv(stages, p_rows, (size_t)n * 2, TILE * 2, v, t + 1);
        }
        cp_async_commit();
        cp_async_wait<1>();  // tile t has landed (for this thread) ...
        __syncthreads();     // ... and for every thread
        const uint32_t stage = stages + (t % 2) * 2 * TILE_BYTES;
        uint32_t p[1][4][4];
        load_a_fragments(p, stage);
        pv_tile(o, p, stage + TILE_BYTES);
        __syncthreads();     // every warp is done with the stage before it is refilled
    }
    const float ones[1][2] = {{1.0f, 1.0f}};
    store_output(o, ones, tiles, O + ((size_t)blockIdx.y * n + blockIdx.x * TILE) * TILE);
}

// The online softmax of one 64-key tile of scores for row g + 8 h of this warp (h = 0, 1): the new running
// max (log2 units), the scores replaced by 2^(scaled score - max), the running sum and O rescaled
__device__ __forceinline__ void online_softmax(float (&s)[8][4], float (&o)[8][4], float (&m)[2], float (&l)[2],
                                               float scale_log2)
{
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float tile_max = -INFINITY;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            tile_max = fmaxf(tile_max, fmaxf(s[j][2 * h], s[j][2 * h + 1]));
        }
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));  // the 4 threads of a row
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
        const float new_max = fmaxf(m[h], tile_max * scale_log2);
        const float rescale = exp2_approx(m[h] - new_max);  // 0 on the first tile (m = -inf)
        m[h] = new_max;
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                s[j][2 * h + e] = exp2_approx(s[j][2 * h + e] * scale_log2 - new_max);
                sum += s[j][2 * h + e];
                o[j][2 * h + e] *= rescale;
            }
        }
        l[h] = l[h] * rescale + sum;  // this thread's columns; the row's 4 threads are summed at the end
    }
}

extern "C" __global__ void __launch_bounds__(FLASH_THREADS, 2)
    attn_flash(const uint16_t* Q, const uint16_t* K, const uint16_t* V, uint16_t* O, int n, float scale, int causal)
{
    // 2 stages of (K, V); the Q tile (FLASH_ROWS rows: two tiles) lands in stage 1 before the first refill of it
    __shared__ __align__(128) uint8_t tiles[4 * TILE_BYTES];
    const size_t head = (size_t)blockIdx.y * n * TILE;
    // causal: the last Q tiles have the most key tiles, so they go first (the grid runs in blockIdx order)
    const int q_index = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const size_t q_first = head + (size_t)q_index * FLASH_ROWS * TILE;
    const uint32_t stages = shared_address(tiles);
    const uint32_t q_tile = stages + 2 * TILE_BYTES;
    const uint8_t* k = reinterpret_cast<const uint8_t*>(K + head);
    const uint8_t* v = reinterpret_cast<const uint8_t*>(V + head);
    const int tiles_n = n / TILE;
    load_tile<FLASH_THREADS>(q_tile, reinterpret_cast<const uint8_t*>(Q + q_first), TILE * 2);
    load_tile<FLASH_THREADS>(q_tile + TILE_BYTES, reinterpret_cast<const uint8_t*>(Q + q_first + TILE * TILE),
                             TILE * 2);
    load_kv<FLASH_THREADS>(stages, k, TILE * 2, TILE * TILE * 2, v, 0);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    uint32_t q[FLASH_MT][4][4];
    load_a_fragments(q, q_tile);  // warp w: rows 16 FLASH_MT w .. of the Q tile
    __syncthreads();              // every warp has its Q fragments: stage 1 may be refilled
    float o[FLASH_MT][8][4];
    float m[FLASH_MT][2];
    float l[FLASH_MT][2];
#pragma unroll
    for (int mt = 0; mt < FLASH_MT; ++mt) {
        m[mt][0] = m[mt][1] = -INFINITY;
        l[mt][0] = l[mt][1] = 0.0f;
    }
    zero(o);
    const float scale_log2 = scale * LOG2E;
    const int first_row = q_index * FLASH_ROWS;
    // causal: the key tiles up to the Q tile's last row; the ones past it are skipped, not computed
    const int tiles_end = causal ? min(tiles_n, (first_row + FLASH_ROWS) / TILE) : tiles_n;
    for (int t = 0; t < tiles_end; ++t) {
        if (t + 1 < tiles_end) {
            load_kv<FLASH_THREADS>(stages, k, TILE * 2, TILE * TILE * 2, v, t + 1);
        }
        cp_async_commit();
        cp_async_wait<1>();  // tile t has landed (for this thread) ...
        __syncthreads();     // ... and for every thread
        const uint32_t stage = stages + (t % 2) * 2 * TILE_BYTES;
        float s[FLASH_MT][8][4];
        scores_tile(s, q, stage);
        uint32_t p[FLASH_MT][4][4];
#pragma unroll
        for (int mt = 0; mt < FLASH_MT; ++mt) {
            if (causal && (t + 1) * TILE > first_row) {  // a tile that reaches past some row of the block
                mask_future(s[mt], first_row + ((threadIdx.x / 32) * FLASH_MT + mt) * 16, t * TILE);
            }
            online_softmax(s[mt], o[mt], m[mt], l[mt], scale_log2);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {  // accumulators of n-tiles 2 kk, 2 kk + 1 = A fragment of k-step kk
                p[mt][kk][0] = pack_half2(s[mt][2 * kk][0], s[mt][2 * kk][1]);
                p[mt][kk][1] = pack_half2(s[mt][2 * kk][2], s[mt][2 * kk][3]);
                p[mt][kk][2] = pack_half2(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
                p[mt][kk][3] = pack_half2(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
            }
        }
        pv_tile(o, p, stage + TILE_BYTES);
        __syncthreads();     // every warp is done with the stage before it is refilled
    }
#pragma unroll
    for (int mt = 0; mt < FLASH_MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            l[mt][h] += __shfl_xor_sync(0xffffffffu, l[mt][h], 1);
            l[mt][h] += __shfl_xor_sync(0xffffffffu, l[mt][h], 2);
        }
    }
    store_output(o, l, tiles, O + q_first);  // each warp stages its rows through the idle buffers
}
