// attn_flash3: FlashAttention-3-style fused attention for Hopper (sm_90a), written here from the algorithm of the
// FlashAttention-3 paper (warp specialisation, TMA, wgmma, the online softmax) and the PTX ISA: O = softmax(scale
// Q K^T) V per head of dimension 64, fp16 Q, K, V, O (as [heads][n][64] row-major; their tensor maps are 3-D with
// boxes {64, 128, 1}, O's {64, 64, 1}, 128-byte swizzle), fp32 accumulators; causal != 0 masks each row's future
// keys. n must be a multiple of 128.
//
// Grid (min(heads x n / 128, SMs)), persistent: each block computes one (head, 128-row Q tile) work item per
// round of gridDim.x items (item_of; causal: the Q tiles with the most key tiles first); 384 threads, SMEM_BYTES of dynamic shared
// memory. Warpgroup 0 is the producer (setmaxnreg.dec 24): one thread loads each item's Q tile with TMA
// (cp.async.bulk.tensor.3d, box {64, 128, 1}) into one of two Q buffers and streams the head's K and V tiles of
// BN = 128 keys through STAGES = 2 buffers, running ahead into the next item. Each tile has its own "full"
// mbarrier (arrive.expect_tx with its 16 KB; the TMA's bytes complete the transaction), so that S = Q K^T can
// start before V has landed, and its own "empty" mbarrier (both consumers arrive), so that a K buffer is refilled
// as soon as its S is computed, before the P V of the same tile is done. Warpgroups 1 and 2 are the consumers
// (setmaxnreg.inc 240), 64 Q rows each. Per key tile:
//   S = Q K^T   : 4 wgmma.mma_async m64n128k16, A (Q) and B (K) from shared memory through 128-byte-swizzle
//                 K-major descriptors (K is keys x dims: the B operand's K dimension, dims, is contiguous);
//   softmax     : in registers, the running row max m and sum l in log2 units (scale * log2(e) folded into the
//                 exponent: one FFMA and one ex2.approx per score), O rescaled by 2^(m_old - m_new);
//   P           : the S accumulators converted to fp16 in place of the wgmma A fragment (the m64nNk16 D layout
//                 of keys 16 kk .. 16 kk + 15 is the k-step kk A layout: mma.sync's, PTX ISA "Matrix fragments
//                 for wgmma.mma_async");
//   O += P V    : 8 wgmma.mma_async m64n64k16, A = P from registers, B = V from shared memory. V is keys x dims
//                 row-major, so B (K = keys, N = dims) is MN-major: imm-trans-b = 1 with a 128-byte-swizzle
//                 descriptor whose stride-dimension offset (SBO) is 1024 bytes, the next 8 keys, and whose
//                 start moves 16 keys (2048 bytes) per k-step.
// At the end of an item each consumer divides its rows by l, writes them as fp16 in the 128-byte-swizzled layout
// into its half of a staging buffer and one thread stores them with a TMA tensor store (box {64, 64, 1}).
// TMA's 128-byte swizzle writes row r of a box at r * 128 bytes from the 1024-aligned buffer with its 16-byte
// chunk c at chunk c ^ (r % 8): the layout both descriptor kinds read (PTX ISA, "Matrix Descriptor Format").
//
// FlashAttention-3's two overlaps: within a consumer, tile t + 1's S = Q K^T is issued before tile t's O += P V
// and its softmax runs while P V is on the tensor cores (two register sets of P; O is rescaled after P V
// completes); between the consumers, ping-pong turns (take_turn / pass_turn) make one issue its wgmmas while the
// other computes its softmax. Simplifications against FlashAttention-3: a static round-robin of the work items
// (no tile scheduler), no FP8 path.
#include <cstdint>
#include <cuda.h>
#include <cuda_fp16.h>
#include "../hopper_ptx.cuh"

#define D 64                           // head dimension: 128 bytes per fp16 row, one swizzle row
#define BM 128                         // Q rows per CTA
#define BN 128                         // keys per K / V tile
#define THREADS 384
#ifndef STAGES
#define STAGES 2
#endif
#define Q_BYTES (BM * D * 2)           // 16 KB
#define TILE_BYTES (BN * D * 2)        // 16 KB: one K or V tile
#define STAGE_BYTES (2 * TILE_BYTES)
#define BARRIERS (4 + 4 * STAGES)      // q_full[2], q_empty[2], k_full, v_full, k_empty, v_empty [STAGES]
#define SMEM_BYTES (3 * Q_BYTES + STAGES * STAGE_BYTES + 1024 + BARRIERS * 8)   // 2 Q, O staging, stages
#define LOG2E 1.4426950408889634f

// the K-major (Q, K) and MN-major (V, with imm-trans-b = 1) operands have the same 128-byte-swizzle descriptor:
// a key's or a row's 64 elements are one 128-byte swizzle row, SBO = 1024 bytes between groups of 8 (desc_128b)
// box {64, rows, 1} of a [heads][n][64] tensor at (row, head) into shared memory, completing bytes on bar
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, int row, int head, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];\n"
                 :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(0), "r"(row), "r"(head), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, int row, int head, uint32_t src) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];\n"
                 :: "l"(reinterpret_cast<uint64_t>(map)), "r"(0), "r"(row), "r"(head), "r"(src) : "memory");
}

__device__ __forceinline__ float exp2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ uint32_t pack_half2(float low, float high) {
    __half2 h = __floats2half2_rn(low, high);
    return *reinterpret_cast<uint32_t*>(&h);
}

// S (64 x 128 per warpgroup) += or = Q K^T for one k-step of 16 dims: A and B from shared memory (K-major)
__device__ __forceinline__ void wgmma_s(float (&s)[64], uint64_t da, uint64_t db, int accumulate) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(s[0]), "+f"(s[1]), "+f"(s[2]), "+f"(s[3]), "+f"(s[4]), "+f"(s[5]), "+f"(s[6]), "+f"(s[7]), "+f"(s[8]), "+f"(s[9]), "+f"(s[10]), "+f"(s[11]), "+f"(s[12]), "+f"(s[13]), "+f"(s[14]), "+f"(s[15]), "+f"(s[16]), "+f"(s[17]), "+f"(s[18]), "+f"(s[19]), "+f"(s[20]), "+f"(s[21]), "+f"(s[22]), "+f"(s[23]), "+f"(s[24]), "+f"(s[25]), "+f"(s[26]), "+f"(s[27]), "+f"(s[28]), "+f"(s[29]), "+f"(s[30]), "+f"(s[31]), "+f"(s[32]), "+f"(s[33]), "+f"(s[34]), "+f"(s[35]), "+f"(s[36]), "+f"(s[37]), "+f"(s[38]), "+f"(s[39]), "+f"(s[40]), "+f"(s[41]), "+f"(s[42]), "+f"(s[43]), "+f"(s[44]), "+f"(s[45]), "+f"(s[46]), "+f"(s[47]), "+f"(s[48]), "+f"(s[49]), "+f"(s[50]), "+f"(s[51]), "+f"(s[52]), "+f"(s[53]), "+f"(s[54]), "+f"(s[55]), "+f"(s[56]), "+f"(s[57]), "+f"(s[58]), "+f"(s[59]), "+f"(s[60]), "+f"(s[61]), "+f"(s[62]), "+f"(s[63])
                 : "l"(da), "l"(db), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_o(float (&o)[32], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
                 : "+f"(o[0]), "+f"(o[1]), "+f"(o[2]), "+f"(o[3]), "+f"(o[4]), "+f"(o[5]), "+f"(o[6]), "+f"(o[7]), "+f"(o[8]), "+f"(o[9]), "+f"(o[10]), "+f"(o[11]), "+f"(o[12]), "+f"(o[13]), "+f"(o[14]), "+f"(o[15]), "+f"(o[16]), "+f"(o[17]), "+f"(o[18]), "+f"(o[19]), "+f"(o[20]), "+f"(o[21]), "+f"(o[22]), "+f"(o[23]), "+f"(o[24]), "+f"(o[25]), "+f"(o[26]), "+f"(o[27]), "+f"(o[28]), "+f"(o[29]), "+f"(o[30]), "+f"(o[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

// The m64nNk16 D fragment (PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16"): warp q of a warpgroup
// holds rows 16 q .. 16 q + 15; its register i is row g + 8 ((i % 4) / 2), column 8 (i / 4) + 2 t + i % 2
// (g = lane / 4, t = lane % 4). So thread (g, t) holds, of S, rows g and g + 8 (h = 0, 1) at registers 4 j + 2 h
// + e (column 8 j + 2 t + e), and of O the same pattern over 64 columns.

// The causal mask on the diagonal tile (key tile = Q tile, both 128 from the same position): key 8 j + 2 t + e
// after row row0 + g + 8 h becomes -inf, which the softmax turns into 0
__device__ __forceinline__ void mask_future(float (&s)[64], int row0) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < 64; ++i) {
        if (8 * (i / 4) + 2 * (lane & 3) + (i & 1) > row0 + (lane >> 2) + 8 * ((i % 4) / 2)) s[i] = -INFINITY;
    }
}

// The online softmax of one tile of scores: the new running max m (log2 units: scores times scale log2(e)), the
// scores replaced by 2^(scale log2(e) s - m), the running sum l (this thread's columns; the row's 4 threads are
// summed at the end) and the factor 2^(m_old - m_new) by which O must be rescaled (0 on the first tile, m_old =
// -inf). The max and the sum are trees (8 partial maxima, 4 partial sums) rather than chains of 32 dependent
// instructions; O is not touched here, because the previous tile's P V may still be accumulating into it.
__device__ __forceinline__ void online_softmax(float (&s)[64], float (&m)[2], float (&l)[2], float (&rescale)[2],
                                               float scale_log2) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float part[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            part[j] = fmaxf(fmaxf(s[8 * j + 2 * h], s[8 * j + 2 * h + 1]),
                            fmaxf(s[8 * j + 4 + 2 * h], s[8 * j + 4 + 2 * h + 1]));
        }
        float tile_max = fmaxf(fmaxf(fmaxf(part[0], part[1]), fmaxf(part[2], part[3])),
                               fmaxf(fmaxf(part[4], part[5]), fmaxf(part[6], part[7])));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));   // the 4 threads of a row
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
        const float new_max = fmaxf(m[h], tile_max * scale_log2);
        rescale[h] = exp2_approx(m[h] - new_max);
        m[h] = new_max;
        // in groups of 8 scores: 8 FFMAs, then 8 ex2 (in flight together), then their 8 additions, written in
        // that order because a scheduler that keeps the source order (as under register pressure) would
        // otherwise wait out each ex2's latency before the next score
        float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int g = 0; g < 4; ++g) {
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                float& x = s[4 * (4 * g + i / 2) + 2 * h + i % 2];
                x = fmaf(x, scale_log2, -new_max);
            }
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                float& x = s[4 * (4 * g + i / 2) + 2 * h + i % 2];
                x = exp2_approx(x);
            }
#pragma unroll
            for (int i = 0; i < 8; ++i) sum[i % 4] += s[4 * (4 * g + i / 2) + 2 * h + i % 2];
        }
        l[h] = l[h] * rescale[h] + ((sum[0] + sum[1]) + (sum[2] + sum[3]));
    }
}

// P as fp16 wgmma A fragments: k-step kk (keys 16 kk .. 16 kk + 15) is S registers 8 kk .. 8 kk + 7, two per
// register (register j: row g + 8 (j % 2), keys 16 kk + 8 (j / 2) + 2 t, + 1)
__device__ __forceinline__ void to_fragments(const float (&s)[64], uint32_t (&p)[BN / 16][4]) {
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
#pragma unroll
        for (int j = 0; j < 4; ++j) p[kk][j] = pack_half2(s[8 * kk + 2 * j], s[8 * kk + 2 * j + 1]);
    }
}

// S = Q K^T for the K tile at k_tile: 4 wgmmas (k-steps of 16 dims, + 32 bytes each), one commit group
__device__ __forceinline__ void issue_scores(float (&s)[64], uint64_t dq, uint32_t k_tile) {
    const uint64_t dk = desc_128b(k_tile);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) wgmma_s(s, dq + 2 * kk, dk + 2 * kk, kk);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// O += P V for the V tile at v_tile: 8 wgmmas (k-steps of 16 keys, + 2048 bytes each), one commit group
__device__ __forceinline__ void issue_pv(float (&o)[32], const uint32_t (&p)[BN / 16][4], uint32_t v_tile) {
    const uint64_t dv = desc_128b(v_tile);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) wgmma_o(o, p[kk], dv + kk * ((16 * 128) >> 4));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// FlashAttention-3's ping-pong scheduling of the two consumers: they take turns issuing their wgmmas, so that one
// warpgroup's softmax runs while the other's products occupy the tensor cores. As in FlashAttention-3, consumer c's
// turn is named barrier 3 + c over 256 threads: its own 128 wait there (bar.sync) and the other consumer's 128
// arrive there without waiting (bar.arrive) once they have issued their batch of wgmmas. The turns alternate
// strictly (a consumer passes only after taking its own turn), so no barrier sees two passes before its wait.
__device__ __forceinline__ void take_turn(int consumer) {
    asm volatile("bar.sync %0, 256;\n" :: "r"(3 + consumer) : "memory");
}

__device__ __forceinline__ void pass_turn(int consumer) {
    asm volatile("bar.arrive %0, 256;\n" :: "r"(4 - consumer) : "memory");
}

__device__ __forceinline__ void st_shared_b32(uint32_t addr, uint32_t value) {
    asm volatile("st.shared.b32 [%0], %1;\n" :: "r"(addr), "r"(value) : "memory");
}

// This warpgroup's 64 rows of O / l as fp16 in the 128-byte-swizzled layout at `out` (row r at r * 128 bytes, its
// 16-byte chunk c at chunk c ^ (r % 8): what the O tensor map's swizzle expects), then one TMA store of the box.
// The store is not waited for here: the next store_output (and the kernel's end) waits until it has read `out`.
__device__ __forceinline__ void store_output(const float (&o)[32], float (&l)[2], uint32_t out,
                                             const CUtensorMap* map, int row, int head, int consumer) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, q = (threadIdx.x / 32) & 3;
    if ((threadIdx.x & 127) == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    asm volatile("bar.sync %0, 128;\n" :: "r"(1 + consumer) : "memory");   // the previous store has read `out`
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
        const float inverse = 1.0f / l[h];
        const int r = 16 * q + g + 8 * h;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            st_shared_b32(out + r * 128 + ((j ^ (r & 7)) << 4) + 4 * t,
                          pack_half2(o[4 * j + 2 * h] * inverse, o[4 * j + 2 * h + 1] * inverse));
        }
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");   // the generic writes, visible to the TMA
    asm volatile("bar.sync %0, 128;\n" :: "r"(1 + consumer) : "memory");   // this warpgroup's 4 warps
    if ((threadIdx.x & 127) == 0) {
        tma_store_3d(map, row, head, out);
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");   // waited for before `out` is rewritten
    }
}

// The block's work item of round `round` (-1: none left): rounds of gridDim.x items, the blocks taking them in
// order in even rounds and in reverse in odd ones, which evens out the blocks' work when the items' costs fall
// (causal: items in order of decreasing key tiles)
__device__ __forceinline__ int item_of(int round, int items) {
    const int item = round * gridDim.x + ((round & 1) ? gridDim.x - 1 - blockIdx.x : blockIdx.x);
    return item < items ? item : -1;
}

// Work item `item` of the heads x (n / 128) (head, Q tile) pairs: non-causal in order; causal the Q tiles with the
// most key tiles first (all heads' last Q tiles, then their second-to-last, ...)
__device__ __forceinline__ void decode_item(int item, int q_tiles, int heads, int causal, int& head, int& q_index) {
    if (causal) {
        q_index = q_tiles - 1 - item / heads;
        head = item % heads;
    } else {
        head = item / q_tiles;
        q_index = item % q_tiles;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
attn_flash3(const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
            const __grid_constant__ CUtensorMap tmV, const __grid_constant__ CUtensorMap tmO, int n, int heads,
            float scale, int causal) {
    extern __shared__ uint8_t smem_raw[];
    const uint32_t q_bufs = (smem_addr(smem_raw) + 1023) & ~1023u;  // the swizzle repeats every 1024 bytes
    const uint32_t o_buf = q_bufs + 2 * Q_BYTES;                    // 2 Q buffers, then O's staging
    const uint32_t stages = o_buf + Q_BYTES;                        // stage s: K tile, then V tile
    const uint32_t q_full = stages + STAGES * STAGE_BYTES, q_empty = q_full + 16;   // one per Q buffer
    const uint32_t k_full = q_empty + 16, v_full = k_full + 8 * STAGES;
    const uint32_t k_empty = v_full + 8 * STAGES, v_empty = k_empty + 8 * STAGES;
    const int q_tiles = n / BM, items = heads * q_tiles;
    const int wg = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        for (int b = 0; b < 2; ++b) {
            mbar_init(q_full + 8 * b, 1);
            mbar_init(q_empty + 8 * b, 2);                          // one arrival per consumer warpgroup
        }
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(k_full + 8 * s, 1);
            mbar_init(v_full + 8 * s, 1);
            mbar_init(k_empty + 8 * s, 2);
            mbar_init(v_empty + 8 * s, 2);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    // Persistent, as FlashAttention-3: a block computes one work item per round (item_of); the producer runs ahead
    // into the next item (its Q into the other of two Q buffers, its K and V through the same stages), so a new Q
    // tile's first loads overlap the previous one's last tiles. Item `round` of the block uses Q buffer round % 2
    // (phase round / 2); key tiles are counted over the block's items (g): stage g % STAGES, phase g / STAGES.
    if (wg == 0) {                                                  // producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
        if (threadIdx.x == 0) {
            int g = 0, round = 0;
            for (int item = item_of(0, items); item >= 0; item = item_of(++round, items)) {
                int head, q_index;
                decode_item(item, q_tiles, heads, causal, head, q_index);
                const int tiles = causal ? q_index + 1 : n / BN;   // causal: up to the diagonal tile (BN = BM)
                const int qb = round & 1;
                if (round >= 2) mbar_wait(q_empty + 8 * qb, ((round / 2) - 1) & 1);   // item round - 2 is done
                mbar_expect_tx(q_full + 8 * qb, Q_BYTES);
                tma_load_3d(q_bufs + qb * Q_BYTES, &tmQ, q_index * BM, head, q_full + 8 * qb);
                for (int t = 0; t < tiles; ++t, ++g) {
                    const int s = g % STAGES;
                    const uint32_t buf = stages + s * STAGE_BYTES;
                    const uint32_t parity = ((g / STAGES) - 1) & 1;    // tile g - STAGES's release
                    if (g >= STAGES) mbar_wait(k_empty + 8 * s, parity);
                    mbar_expect_tx(k_full + 8 * s, TILE_BYTES);
                    tma_load_3d(buf, &tmK, t * BN, head, k_full + 8 * s);
                    if (g >= STAGES) mbar_wait(v_empty + 8 * s, parity);
                    mbar_expect_tx(v_full + 8 * s, TILE_BYTES);
                    tma_load_3d(buf + TILE_BYTES, &tmV, t * BN, head, v_full + 8 * s);
                }
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");         // consumers
    const int consumer = wg - 1;
    const int warp_row = consumer * 64 + ((threadIdx.x / 32) & 3) * 16;   // this warp's first row in the tile
    const float scale_log2 = scale * LOG2E;
    const bool leader = (threadIdx.x & 127) == 0;                   // arrives for its warpgroup
    // The turns: consumer 0 goes first (consumer 1 passes it the first turn); each takes a turn for each batch of
    // wgmmas it issues and passes it on after issuing (consumer 1's last pass is an arrival nobody waits for)
    int g = 0, round = 0;
    if (consumer == 1) pass_turn(1);
    for (int item = item_of(0, items); item >= 0; item = item_of(++round, items)) {
        int head, q_index;
        decode_item(item, q_tiles, heads, causal, head, q_index);
        const int tiles = causal ? q_index + 1 : n / BN;
        const int g0 = g;                                           // this item's first key tile, counted over items
        const int qb = round & 1;
        const uint64_t dq = desc_128b(q_bufs + qb * Q_BYTES + consumer * 64 * 128);   // its 64 rows of Q
        float o[32], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
#pragma unroll
        for (int i = 0; i < 32; ++i) o[i] = 0.0f;
        // FlashAttention-3's intra-warpgroup pipelining: while tile t's P V runs on the tensor cores, tile t + 1's
        // S = Q K^T (issued before it) is waited for and its softmax computed; O is rescaled once P V is done
        float sc[64], rescale[2];
        uint32_t p[BN / 16][4];
        mbar_wait(q_full + 8 * qb, (round / 2) & 1);
        mbar_wait(k_full + 8 * (g0 % STAGES), (g0 / STAGES) & 1);
        take_turn(consumer);
        issue_scores(sc, dq, stages + (g0 % STAGES) * STAGE_BYTES);
        pass_turn(consumer);
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        if (leader) mbar_arrive(k_empty + 8 * (g0 % STAGES));      // K of the first tile is read
        if (leader && tiles == 1) mbar_arrive(q_empty + 8 * qb);             // and so is Q, when it was the only tile
        if (causal && q_index == 0) mask_future(sc, warp_row);
        online_softmax(sc, m, l, rescale, scale_log2);
        to_fragments(sc, p);
        // One pipelined step: tile t's P V with P in `cur`, tile t + 1's S and softmax into `next`. Unrolled by two
        // so that the two P register sets swap roles without a copy: a copy into `cur` while P V still reads it
        // would make ptxas serialize the wgmmas (a wgmma's A registers may not be written before it completes).
        auto step = [&](int t, uint32_t (&cur)[BN / 16][4], uint32_t (&next)[BN / 16][4]) {
            const int s = (g0 + t) % STAGES, s_next = (g0 + t + 1) % STAGES;
            mbar_wait(k_full + 8 * s_next, ((g0 + t + 1) / STAGES) & 1);
            mbar_wait(v_full + 8 * s, ((g0 + t) / STAGES) & 1);
            take_turn(consumer);
            issue_scores(sc, dq, stages + s_next * STAGE_BYTES);
            issue_pv(o, cur, stages + s * STAGE_BYTES + TILE_BYTES);
            pass_turn(consumer);
            asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");   // S of tile t + 1 is done
            if (leader) mbar_arrive(k_empty + 8 * s_next);                  // and its K tile is free
            if (leader && t + 2 == tiles) mbar_arrive(q_empty + 8 * qb);            // the item's last S: Q is free
            if (causal && t + 1 == q_index) mask_future(sc, warp_row);
            online_softmax(sc, m, l, rescale, scale_log2);
            to_fragments(sc, next);
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");   // P V of tile t is done
            if (leader) mbar_arrive(v_empty + 8 * s);                       // V of stage s is free
#pragma unroll
            for (int j = 0; j < 8; ++j) {
#pragma unroll
                for (int r = 0; r < 4; ++r) o[4 * j + r] *= rescale[r / 2];
            }
        };
        auto finish = [&](int t, const uint32_t (&cur)[BN / 16][4]) {    // the last tile's P V alone
            const int s = (g0 + t) % STAGES;
            mbar_wait(v_full + 8 * s, ((g0 + t) / STAGES) & 1);
            take_turn(consumer);
            issue_pv(o, cur, stages + s * STAGE_BYTES + TILE_BYTES);
            pass_turn(consumer);
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            if (leader) mbar_arrive(v_empty + 8 * s);
        };
        uint32_t p_other[BN / 16][4];
        int t = 0;
        for (; t + 2 < tiles; t += 2) {
            step(t, p, p_other);
            step(t + 1, p_other, p);
        }
        if (t + 1 < tiles) {
            step(t, p, p_other);
            finish(t + 1, p_other);
        } else {
            finish(t, p);
        }
        g = g0 + tiles;
        store_output(o, l, o_buf + consumer * 64 * 128, &tmO, q_index * BM + consumer * 64, head, consumer);
    }
    if ((threadIdx.x & 127) == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");   // before exit
}
