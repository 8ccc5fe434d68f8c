// gemm_hopper: C = A * B^T the way Hopper GEMMs are written today, written here from the PTX ISA and the CUDA
// programming guide: TMA tensor copies into 128-byte-swizzled shared memory, an mbarrier-pipelined producer warp,
// two consumer warpgroups issuing wgmma.mma_async m64n256k16 (BF16 inputs, FP32 accumulators) and setmaxnreg
// moving registers from the producer to the consumers. A is M x K row-major, B is N x K row-major (K-major, a
// linear layer's weights), C is M x N row-major fp32. K must be a multiple of 8 (the tensor map's 16-byte
// stride rule); any M and N (TMA fills the parts of a box outside the matrix with zeros).
//
// A block of 384 threads computes a BM x BN = 128 x 256 tile of C. Warpgroup 0 is the producer: it gives up
// registers (setmaxnreg.dec 40) and one elected thread streams K slices of BK = 64 bf16 (128 bytes per row:
// one swizzle row) through STAGES = 4 shared buffers: it waits for the buffer's "empty" mbarrier, arms its
// "full" mbarrier with the slice's bytes (arrive.expect_tx) and issues two TMA loads (A's 128 rows, B's 256
// rows; box {64, rows} at {k0, row0}), whose bytes complete the transaction. Warpgroups 1 and 2 are consumers
// (setmaxnreg.inc 232): each waits for "full", issues 4 wgmmas (its 64 rows of A x all 256 rows of B, the
// descriptors' start advanced 32 bytes per 16 elements of K), keeps one slice in flight (wgmma.wait_group 1)
// and then releases the previous slice's buffer with an arrive on its "empty" mbarrier (count 2: one per
// consumer warpgroup). TMA's 128-byte swizzle writes row x of a box at x * 128 bytes from the 1024-aligned
// buffer with its 16-byte chunk c at chunk c ^ (x % 8): exactly the layout a 128-byte-swizzle K-major wgmma
// descriptor reads (SBO = 1024 bytes, the next 8 rows; PTX ISA "Matrix Descriptor Format").
//
// gemm_hopper_cluster is the same kernel for a 2 x 1 cluster (cudaLaunchKernelEx with cluster dims (2, 1, 1)):
// the two CTAs compute the same 256 columns of C for neighbouring row blocks, so they need the same B slice;
// each CTA loads its half (128 rows) of it with .multicast::cluster to both CTAs, so L2 serves B once per pair.
// A buffer is refilled only when both CTAs' consumers have released it: consumers arrive on the "empty"
// mbarriers of both CTAs (mapa + mbarrier.arrive.shared::cluster), count 4.
// gemm_hopper_cluster2x2 (at the end of this file) multicasts A along each row of a 2 x 2 cluster as well.
//
// Launch: grid (ceil(N / 256), ceil(M / 128)) (the cluster kernel: an even grid.x... see the program's toml),
// 384 threads, SMEM_BYTES of dynamic shared memory; the tensor maps (CUtensorMap, __grid_constant__): A as
// dims {K, M}, box {64, 128}; B as dims {K, N}, box {64, 256} (cluster kernel: {64, 128}); 128-byte swizzle.
#include <cstdint>
#include <cuda.h>
#include <cuda_bf16.h>
#include "hopper_ptx.cuh"

#define BM 128
#define BN 256
#define BK 64                          // bf16 elements per row of a slice: 128 bytes, one swizzle row
#define THREADS 384
#define STAGES 4
#define A_BYTES (BM * 128)             // one stage of A: 16 KB
#define B_BYTES (BN * 128)             // one stage of B: 32 KB
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define SMEM_BYTES (STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8)

// arrive on the mbarrier at the same offset in CTA `rank` of the cluster
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
    asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
                 " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n"
                 :: "r"(bar), "r"(rank) : "memory");
}

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar) : "memory");
}

__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, int x, int y,
                                                      uint32_t bar, uint16_t mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n"
                 :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar), "h"(mask)
                 : "memory");
}

__device__ __forceinline__ void wgmma_m64n256k16(float (&acc)[128], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1, 0, 0;\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]), "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]), "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]), "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]), "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]), "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63]), "+f"(acc[64]), "+f"(acc[65]), "+f"(acc[66]), "+f"(acc[67]), "+f"(acc[68]), "+f"(acc[69]), "+f"(acc[70]), "+f"(acc[71]), "+f"(acc[72]), "+f"(acc[73]), "+f"(acc[74]), "+f"(acc[75]), "+f"(acc[76]), "+f"(acc[77]), "+f"(acc[78]), "+f"(acc[79]), "+f"(acc[80]), "+f"(acc[81]), "+f"(acc[82]), "+f"(acc[83]), "+f"(acc[84]), "+f"(acc[85]), "+f"(acc[86]), "+f"(acc[87]), "+f"(acc[88]), "+f"(acc[89]), "+f"(acc[90]), "+f"(acc[91]), "+f"(acc[92]), "+f"(acc[93]), "+f"(acc[94]), "+f"(acc[95]), "+f"(acc[96]), "+f"(acc[97]), "+f"(acc[98]), "+f"(acc[99]), "+f"(acc[100]), "+f"(acc[101]), "+f"(acc[102]), "+f"(acc[103]), "+f"(acc[104]), "+f"(acc[105]), "+f"(acc[106]), "+f"(acc[107]), "+f"(acc[108]), "+f"(acc[109]), "+f"(acc[110]), "+f"(acc[111]), "+f"(acc[112]), "+f"(acc[113]), "+f"(acc[114]), "+f"(acc[115]), "+f"(acc[116]), "+f"(acc[117]), "+f"(acc[118]), "+f"(acc[119]), "+f"(acc[120]), "+f"(acc[121]), "+f"(acc[122]), "+f"(acc[123]), "+f"(acc[124]), "+f"(acc[125]), "+f"(acc[126]), "+f"(acc[127])
                 : "l"(da), "l"(db));
}


// The consumers' side of the pipeline, shared by the kernels: the tile's K slices are the pipeline's slices
// g0 .. g0 + kslices - 1 (stage g % STAGES, phase (g / STAGES) & 1); `release(s)` frees stage s. `release_last`:
// also free the last slice's stage once its wgmmas are done (a persistent kernel's next tile reuses it).
template <int S = STAGES, typename Release>
__device__ __forceinline__ void consume(float (&acc)[128], uint32_t base, uint32_t full, int g0, int kslices, int wg,
                                       bool release_last, Release release) {
    for (int kt = 0; kt < kslices; ++kt) {
        const int g = g0 + kt, s = g % S;
        mbar_wait(full + 8 * s, (g / S) & 1);
        const uint32_t buf = base + s * STAGE_BYTES;
        const uint64_t da = desc_128b(buf + wg * 64 * 128);
        const uint64_t db = desc_128b(buf + A_BYTES);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int k = 0; k < BK / 16; ++k)
            wgmma_m64n256k16(acc, da + 2 * k, db + 2 * k);        // + 32 bytes (>> 4) per 16 elements of K
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");   // slice g - 1's wgmmas are done
        if (kt > 0 && (threadIdx.x & 127) == 0) release((g - 1) % S);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    if (release_last && (threadIdx.x & 127) == 0) release((g0 + kslices - 1) % S);
}

// One pair of neighbouring fp32 results as the output type: fp32 as they are, bf16 rounded to nearest even.
__device__ __forceinline__ void store_pair(float* dst, float a, float b) {
    *reinterpret_cast<float2*>(dst) = make_float2(a, b);
}
__device__ __forceinline__ void store_pair(__nv_bfloat16* dst, float a, float b) {
    *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void store_one(float* dst, float a) { *dst = a; }
__device__ __forceinline__ void store_one(__nv_bfloat16* dst, float a) { *dst = __float2bfloat16_rn(a); }

template <typename Out>
__device__ __forceinline__ void store_tile(const float (&acc)[128], Out* __restrict__ C, int M, int N, int m0,
                                           int n0, int wg) {
    // D fragment (PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16"): warp q of the warpgroup holds rows
    // 16q..16q+15; register i is row g + 8 ((i % 4) / 2), column 8 (i / 4) + 2 t + i % 2 (g = lane / 4, t = lane % 4)
    const int lane = threadIdx.x & 31, q = (threadIdx.x / 32) & 3;
    const int row0 = m0 + wg * 64 + q * 16 + (lane >> 2);
    const int col0 = n0 + 2 * (lane & 3);
#pragma unroll
    for (int i = 0; i < 128; i += 2) {
        int row = row0 + 8 * ((i % 4) / 2), col = col0 + 8 * (i / 4);
        if (row < M) {
            Out* dst = C + (size_t)row * N + col;
            if (col + 1 < N && (N & 1) == 0) {
                store_pair(dst, acc[i], acc[i + 1]);
            } else {
                if (col < N) store_one(dst, acc[i]);
                if (col + 1 < N) store_one(dst + 1, acc[i + 1]);
            }
        }
    }
}

__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// Thread 0 makes the stages' "full" (count 1: the producer's expect_tx) and "empty" (count `releases`) mbarriers;
// then every thread of the block (`clustered`: of the cluster) waits until they are made.
template <bool clustered, int S = STAGES>
__device__ __forceinline__ void init_barriers(uint32_t full, uint32_t empty, uint32_t releases) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; ++s) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, releases);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    if (clustered) cluster_sync(); else __syncthreads();
}

// The warp-specialised body of the three kernels: barriers (each "empty" barrier counts `releases` arrivals),
// then warpgroup 0's elected thread runs the producer loop, calling load(buf, kt, full_bar) to fill stage buf
// with K slice kt, and warpgroups 1 and 2 consume, calling release(s) to free stage s, and store their rows of
// the 128 x 256 tile at (m0, n0). `clustered`: the barriers are also armed by the cluster's other CTAs (a
// cluster barrier before the pipeline starts and before exiting, so that no CTA exits while another may still
// multicast into it or arrive on its barriers).
template <bool clustered, typename Load, typename Release>
__device__ __forceinline__ void gemm_tile(float* __restrict__ C, int M, int N, int K, int m0, int n0,
                                          uint32_t base, uint32_t releases, Load load, Release release) {
    const uint32_t full = base + STAGES * STAGE_BYTES, empty = full + 8 * STAGES;
    const int wg = threadIdx.x / 128;
    const int kslices = (K + BK - 1) / BK;
    init_barriers<clustered>(full, empty, releases);
    if (wg == 0) {                                            // producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < kslices; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES) mbar_wait(empty + 8 * s, ((kt / STAGES) - 1) & 1);
                mbar_expect_tx(full + 8 * s, STAGE_BYTES);
                load(base + s * STAGE_BYTES, kt, full + 8 * s);
            }
        }
    } else {                                                  // consumers
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        float acc[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
        consume(acc, base, full, 0, kslices, wg - 1, false, [&](int s) { release(empty + 8 * s); });
        store_tile(acc, C, M, N, m0, n0, wg - 1);
    }
    if (clustered) cluster_sync();
}

__device__ __forceinline__ uint32_t aligned_base() {
    extern __shared__ uint8_t smem_raw[];
    return (smem_addr(smem_raw) + 1023) & ~1023u;            // the swizzle repeats every 1024 bytes
}

__device__ __forceinline__ uint32_t cluster_rank() {
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    return rank;
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_hopper(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
            float* __restrict__ C, int M, int N, int K) {
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    gemm_tile<false>(C, M, N, K, m0, n0, aligned_base(), 2, [&](uint32_t buf, int kt, uint32_t bar) {
        tma_load_2d(buf, &tmA, kt * BK, m0, bar);
        tma_load_2d(buf + A_BYTES, &tmB, kt * BK, n0, bar);
    }, [](uint32_t bar) { mbar_arrive(bar); });                // count 2: one per consumer warpgroup
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_hopper_cluster(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                    float* __restrict__ C, int M, int N, int K) {
    const uint32_t rank = cluster_rank();
    // the cluster's two CTAs are blockIdx.x 2c and 2c + 1: the same 256 columns (n0 from the cluster index),
    // row blocks 2 blockIdx.y + rank
    const int m0 = (blockIdx.y * 2 + rank) * BM, n0 = (blockIdx.x / 2) * BN;
    gemm_tile<true>(C, M, N, K, m0, n0, aligned_base(), 4, [&](uint32_t buf, int kt, uint32_t bar) {
        tma_load_2d(buf, &tmA, kt * BK, m0, bar);
        // this CTA's half of B (rows 128 rank ..) to the same place in both CTAs
        tma_load_2d_multicast(buf + A_BYTES + rank * (B_BYTES / 2), &tmB, kt * BK, n0 + rank * (BN / 2), bar, 0x3);
    }, [](uint32_t bar) {                                     // count 4: 2 consumer warpgroups x 2 CTAs
        mbar_arrive_cluster(bar, 0);
        mbar_arrive_cluster(bar, 1);
    });
}

// gemm_hopper_cluster2x2: 2 x 2 clusters (cluster dims (2, 2, 1)); CTA (x, y) of a cluster is blockIdx
// (2 cx + x, 2 cy + y) and computes the 128 x 256 tile at rows blockIdx.y * 128, columns blockIdx.x * 256. The two
// CTAs of a cluster row (same y) need the same A slice, the two of a cluster column (same x) the same B slice:
// each CTA loads half of its A slice (64 rows, 64 x: the x-th half) multicast to its row (ctaMask 0b11 << 2y) and
// half of its B slice (128 rows, the y-th half) multicast to its column (ctaMask 0b101 << x), so L2 serves each
// slice once per cluster: (2 x 16 + 2 x 32) KB per 4 CTAs, half the plain kernel's bytes. A stage of a CTA is
// written by itself, its row partner and its column partner, so it is refilled only when all three have released
// it: each consumer warpgroup arrives on the "empty" mbarriers of those three CTAs (count 2 x 3 = 6).
extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_hopper_cluster2x2(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                       float* __restrict__ C, int M, int N, int K) {
    const uint32_t rank = cluster_rank();
    const uint32_t x = rank & 1, y = rank >> 1;                // rank = x + 2 y (%cluster_ctaid.x fastest)
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    gemm_tile<true>(C, M, N, K, m0, n0, aligned_base(), 6, [&](uint32_t buf, int kt, uint32_t bar) {
        tma_load_2d_multicast(buf + x * (A_BYTES / 2), &tmA, kt * BK, m0 + x * (BM / 2), bar, uint16_t(0x3 << (2 * y)));
        tma_load_2d_multicast(buf + A_BYTES + y * (B_BYTES / 2), &tmB, kt * BK, n0 + y * (BN / 2), bar,
                              uint16_t(0x5 << x));
    }, [&](uint32_t bar) {                                    // count 6: 2 consumer warpgroups x 3 CTAs
        mbar_arrive_cluster(bar, rank);
        mbar_arrive_cluster(bar, rank ^ 1);
        mbar_arrive_cluster(bar, rank ^ 2);
    });
}

// gemm_hopper_persistent (and _bf16 below): the 2 x 2 cluster kernel made persistent. A grid of a few clusters (as many as are
// resident at once: the host sizes it) walks the 256 x 512 super-tiles of C, cluster c taking super-tiles c,
// c + clusters, ...; CTA (x, y) of the cluster computes the 128 x 256 tile (y, x) of each, multicasting as
// gemm_hopper_cluster2x2 does. The pipeline runs on across tiles: the producer numbers the K slices of all its
// tiles g = 0, 1, ... and fills stage g % STAGES as soon as it is released, so it loads the next tile's first
// slices while the consumers store the last one's C; the consumers release every stage, the last slice's too.
// Super-tiles past M or N (the last row or column of them) are zero-filled by TMA and not stored.
// S pipeline stages; `epilogue(acc, m0, n0, wg)` stores a consumer warpgroup's 64 x 256 part of a tile.
template <int S, typename Epilogue>
__device__ __forceinline__ void gemm_persistent(const CUtensorMap* tmA, const CUtensorMap* tmB, int M, int N, int K,
                                                Epilogue epilogue) {
    const uint32_t rank = cluster_rank();
    const uint32_t x = rank & 1, y = rank >> 1;
    const int cluster = blockIdx.x / 2 + (blockIdx.y / 2) * (gridDim.x / 2);
    const int clusters = gridDim.x * gridDim.y / 4;
    const int across = (N + 2 * BN - 1) / (2 * BN), tiles = across * ((M + 2 * BM - 1) / (2 * BM));
    const int kslices = (K + BK - 1) / BK;
    const uint32_t base = aligned_base();
    const uint32_t full = base + S * STAGE_BYTES, empty = full + 8 * S;
    const int wg = threadIdx.x / 128;
    init_barriers<true, S>(full, empty, 6);                   // count 6: 2 consumer warpgroups x 3 CTAs
    if (wg == 0) {                                            // producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) {
            int g = 0;
            for (int t = cluster; t < tiles; t += clusters) {
                const int m0 = ((t / across) * 2 + y) * BM, n0 = ((t % across) * 2 + x) * BN;
                for (int kt = 0; kt < kslices; ++kt, ++g) {
                    const int s = g % S;
                    if (g >= S) mbar_wait(empty + 8 * s, ((g / S) - 1) & 1);
                    mbar_expect_tx(full + 8 * s, STAGE_BYTES);
                    const uint32_t buf = base + s * STAGE_BYTES;
                    tma_load_2d_multicast(buf + x * (A_BYTES / 2), tmA, kt * BK, m0 + x * (BM / 2), full + 8 * s,
                                          uint16_t(0x3 << (2 * y)));
                    tma_load_2d_multicast(buf + A_BYTES + y * (B_BYTES / 2), tmB, kt * BK, n0 + y * (BN / 2),
                                          full + 8 * s, uint16_t(0x5 << x));
                }
            }
        }
    } else {                                                  // consumers
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        float acc[128];
        int g = 0;
        for (int t = cluster; t < tiles; t += clusters, g += kslices) {
            const int m0 = ((t / across) * 2 + y) * BM, n0 = ((t % across) * 2 + x) * BN;
#pragma unroll
            for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
            consume<S>(acc, base, full, g, kslices, wg - 1, true, [&](int s) {
                mbar_arrive_cluster(empty + 8 * s, rank);
                mbar_arrive_cluster(empty + 8 * s, rank ^ 1);
                mbar_arrive_cluster(empty + 8 * s, rank ^ 2);
            });
            epilogue(acc, m0, n0, wg - 1);
        }
    }
    cluster_sync();
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_hopper_persistent(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                       float* __restrict__ C, int M, int N, int K) {
    gemm_persistent<STAGES>(&tmA, &tmB, M, N, K, [&](const float (&acc)[128], int m0, int n0, int wg) {
        store_tile(acc, C, M, N, m0, n0, wg);
    });
}

// gemm_hopper_persistent_bf16: C in bf16 (rounded to nearest even), as a layer feeding the next one writes it, and
// stored the way Hopper kernels store it: a consumer warpgroup writes its 64 x 256 part of the tile into shared
// memory in two halves of 64 x 128, each as two 64 x 64 boxes in the 128-byte-swizzled layout of the C tensor map
// (tmC: dims {N, M}, box {64, 64}; a thread's bf16 pair lands in 16-byte chunk (column / 8) ^ (row % 8) of its
// row, so the 8 rows one store instruction writes fall in 8 different chunks: no bank conflicts), and one thread
// stores each half with TMA (cp.async.bulk.tensor ... bulk_group, which clips rows and columns past M and N). The
// warpgroup writes the next half (and, after the second, goes on with its next tile) once TMA has read the
// buffer (cp.async.bulk.wait_group.read 0, then a named barrier of the warpgroup's 128 threads). The 4 stages
// (192 KB), the barriers and the two warpgroups' 16 KB buffers fill the 227 KB of shared memory a block may have.
#define EPI_BYTES (64 * 128 * 2)          // one half of a warpgroup's 64 x 256 bf16 part of a tile
extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_hopper_persistent_bf16(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                            const __grid_constant__ CUtensorMap tmC, int M, int N, int K) {
    const uint32_t staging = aligned_base() + STAGES * STAGE_BYTES + 1024;       // past the stages and barriers
    gemm_persistent<STAGES>(&tmA, &tmB, M, N, K, [&](const float (&acc)[128], int m0, int n0, int wg) {
        const uint32_t buf = staging + wg * EPI_BYTES;
        const bool issuer = (threadIdx.x & 127) == 0;
        const int lane = threadIdx.x & 31, q = (threadIdx.x / 32) & 3;
        const int row0 = q * 16 + (lane >> 2), col0 = 2 * (lane & 3);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            if (issuer) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");  // the buffer was read
            asm volatile("bar.sync %0, 128;\n" :: "r"(1 + wg) : "memory");
#pragma unroll
            for (int i = 64 * half; i < 64 * half + 64; i += 2) {
                const int row = row0 + 8 * ((i % 4) / 2), col = col0 + 8 * (i / 4) - 128 * half;
                const int box = col / 64, chunk = (col % 64) / 8;
                const uint32_t at = buf + box * (64 * 128) + row * 128 + ((chunk ^ (row % 8)) * 16) + (col % 8) * 2;
                __nv_bfloat162 pair = __floats2bfloat162_rn(acc[i], acc[i + 1]);
                asm volatile("st.shared.b32 [%0], %1;\n"
                             :: "r"(at), "r"(*reinterpret_cast<uint32_t*>(&pair)) : "memory");
            }
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");     // the writes, visible to TMA
            asm volatile("bar.sync %0, 128;\n" :: "r"(1 + wg) : "memory");
            if (issuer) {
                for (int box = 0; box < 2; ++box)
                    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n"
                                 :: "l"(reinterpret_cast<uint64_t>(&tmC)), "r"(n0 + 128 * half + box * 64),
                                    "r"(m0 + wg * 64), "r"(buf + box * (64 * 128)) : "memory");
                asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
            }
        }
    });
    if ((threadIdx.x & 127) == 0 && threadIdx.x >= 128)
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");     // C written before the block exits
}
