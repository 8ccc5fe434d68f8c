// decode_hopper: y = W x for a decode step's batch on Hopper, the way a narrow-N GEMM is written for it: the
// token tile is as narrow as the batch (BN = 64, 128 or 256 tokens: wgmma.mma_async m64nBNk16), so a small batch
// pays for few padded columns, and every CTA streams its own 128 rows of the weights once. Written here from the
// PTX ISA, with programs/gemm_hopper.cu's pipeline: TMA tensor copies into 128-byte-swizzled shared memory (A: the
// weights, box {64, 128}; B: the activations, box {64, BN}), STAGES mbarrier-pipelined K slices (as many as 200
// KB of shared memory holds, at most 8: 8 for BN = 64, 6 for 128, 4 for 256), one producer thread, two consumer
// warpgroups (64 weight rows each) issuing 4 wgmmas per 64-element K slice with one slice in flight, and bf16
// outputs rounded to nearest even. W is rows x K row-major (K-major), X is tokens x K, C is rows x tokens; K a
// multiple of 8 (the tensor map's 16-byte stride rule); TMA fills rows past `rows` and `tokens` with zeros and
// the epilogue stores only the parts inside C.
//
// Launch: grid (ceil(tokens / BN), ceil(rows / 128)) -- the token tiles of one weight tile run next to each
// other, so a weight tile two of them read comes from L2 the second time -- 384 threads, Tile<BN>::SMEM_BYTES of
// dynamic shared memory.
#include <cstdint>
#include <cuda.h>
#include <cuda_bf16.h>
#include "../hopper_ptx.cuh"

#define BM 128
#define BK 64                                   // bf16 elements per slice row: 128 bytes, one swizzle row
#define THREADS 384
#define A_BYTES (BM * 128)
template <int BN> struct Tile {
    static constexpr int B_BYTES = BN * 128;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int STAGES = (200 * 1024) / STAGE_BYTES > 8 ? 8 : (200 * 1024) / STAGE_BYTES;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8;
};

// The wgmma.mma_async m64nNk16 bf16 -> f32 forms (A and B from shared memory, both K-major: 128-byte-swizzle
// descriptors), with their N / 2 accumulator registers per thread written out.
__device__ __forceinline__ void wgmma_m64n64k16(float (&acc)[32], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, 0;\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31])
                 : "l"(da), "l"(db));
}
__device__ __forceinline__ void wgmma_m64n128k16(float (&acc)[64], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1, 0, 0;\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]), "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]), "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]), "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]), "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]), "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63])
                 : "l"(da), "l"(db));
}
__device__ __forceinline__ void wgmma_m64n256k16(float (&acc)[128], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1, 0, 0;\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]), "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]), "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]), "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]), "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]), "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63]), "+f"(acc[64]), "+f"(acc[65]), "+f"(acc[66]), "+f"(acc[67]), "+f"(acc[68]), "+f"(acc[69]), "+f"(acc[70]), "+f"(acc[71]), "+f"(acc[72]), "+f"(acc[73]), "+f"(acc[74]), "+f"(acc[75]), "+f"(acc[76]), "+f"(acc[77]), "+f"(acc[78]), "+f"(acc[79]), "+f"(acc[80]), "+f"(acc[81]), "+f"(acc[82]), "+f"(acc[83]), "+f"(acc[84]), "+f"(acc[85]), "+f"(acc[86]), "+f"(acc[87]), "+f"(acc[88]), "+f"(acc[89]), "+f"(acc[90]), "+f"(acc[91]), "+f"(acc[92]), "+f"(acc[93]), "+f"(acc[94]), "+f"(acc[95]), "+f"(acc[96]), "+f"(acc[97]), "+f"(acc[98]), "+f"(acc[99]), "+f"(acc[100]), "+f"(acc[101]), "+f"(acc[102]), "+f"(acc[103]), "+f"(acc[104]), "+f"(acc[105]), "+f"(acc[106]), "+f"(acc[107]), "+f"(acc[108]), "+f"(acc[109]), "+f"(acc[110]), "+f"(acc[111]), "+f"(acc[112]), "+f"(acc[113]), "+f"(acc[114]), "+f"(acc[115]), "+f"(acc[116]), "+f"(acc[117]), "+f"(acc[118]), "+f"(acc[119]), "+f"(acc[120]), "+f"(acc[121]), "+f"(acc[122]), "+f"(acc[123]), "+f"(acc[124]), "+f"(acc[125]), "+f"(acc[126]), "+f"(acc[127])
                 : "l"(da), "l"(db));
}

template <int BN> __device__ __forceinline__ void wgmma(float (&acc)[BN / 2], uint64_t da, uint64_t db);
template <> __device__ __forceinline__ void wgmma<64>(float (&acc)[32], uint64_t da, uint64_t db) {
    wgmma_m64n64k16(acc, da, db);
}
template <> __device__ __forceinline__ void wgmma<128>(float (&acc)[64], uint64_t da, uint64_t db) {
    wgmma_m64n128k16(acc, da, db);
}
template <> __device__ __forceinline__ void wgmma<256>(float (&acc)[128], uint64_t da, uint64_t db) {
    wgmma_m64n256k16(acc, da, db);
}

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar) : "memory");
}

template <int BN>
__device__ __forceinline__ void decode_gemm(const CUtensorMap* tmW, const CUtensorMap* tmX, __nv_bfloat16* C,
                                            int rows, int tokens, int K) {
    using T = Tile<BN>;
    constexpr int S = T::STAGES;
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = (smem_addr(smem_raw) + 1023) & ~1023u;    // the swizzle repeats every 1024 bytes
    const uint32_t full = base + S * T::STAGE_BYTES, empty = full + 8 * S;
    const int wg = threadIdx.x / 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int kslices = (K + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; ++s) {
            mbar_init(full + 8 * s, 1);                 // the producer's expect_tx
            mbar_init(empty + 8 * s, 2);                // one release per consumer warpgroup
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (wg == 0) {                                      // producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < kslices; ++kt) {
                const int s = kt % S;
                if (kt >= S) mbar_wait(empty + 8 * s, ((kt / S) - 1) & 1);
                mbar_expect_tx(full + 8 * s, T::STAGE_BYTES);
                const uint32_t buf = base + s * T::STAGE_BYTES;
                tma_load_2d(buf, tmW, kt * BK, m0, full + 8 * s);
                tma_load_2d(buf + A_BYTES, tmX, kt * BK, n0, full + 8 * s);
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int q = wg - 1;                               // this warpgroup's 64 weight rows
    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
    for (int kt = 0; kt < kslices; ++kt) {
        const int s = kt % S;
        mbar_wait(full + 8 * s, (kt / S) & 1);
        const uint32_t buf = base + s * T::STAGE_BYTES;
        const uint64_t da = desc_128b(buf + q * 64 * 128), db = desc_128b(buf + A_BYTES);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int k = 0; k < BK / 16; ++k)
            wgmma<BN>(acc, da + 2 * k, db + 2 * k);    // + 32 bytes (>> 4) per 16 elements of K
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");   // slice kt - 1's wgmmas are done
        if (kt > 0 && (threadIdx.x & 127) == 0) mbar_arrive(empty + 8 * ((kt - 1) % S));
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    // D fragment (PTX ISA, wgmma m64nNk16): warp w of the warpgroup holds rows 16w..16w+15; register i is row
    // g + 8 ((i % 4) / 2), column 8 (i / 4) + 2 t + i % 2 (g = lane / 4, t = lane % 4)
    const int lane = threadIdx.x & 31, w = (threadIdx.x / 32) & 3;
    const int row0 = m0 + q * 64 + w * 16 + (lane >> 2), col0 = n0 + 2 * (lane & 3);
#pragma unroll
    for (int i = 0; i < BN / 2; i += 2) {
        const int row = row0 + 8 * ((i % 4) / 2), col = col0 + 8 * (i / 4);
        if (row < rows) {
            __nv_bfloat16* dst = C + (size_t)row * tokens + col;
            if (col + 1 < tokens && (tokens & 1) == 0) {
                *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(acc[i], acc[i + 1]);
            } else {
                if (col < tokens) *dst = __float2bfloat16_rn(acc[i]);
                if (col + 1 < tokens) dst[1] = __float2bfloat16_rn(acc[i + 1]);
            }
        }
    }
}

#define DECODE_KERNEL(BN)                                                                                        \
    extern "C" __global__ void __launch_bounds__(THREADS, 1)                                                     \
    decode_hopper_n##BN(const __grid_constant__ CUtensorMap tmW, const __grid_constant__ CUtensorMap tmX,       \
                        __nv_bfloat16* __restrict__ C, int rows, int tokens, int K) {                            \
        decode_gemm<BN>(&tmW, &tmX, C, rows, tokens, K);                                                         \
    }
DECODE_KERNEL(64)
DECODE_KERNEL(128)
DECODE_KERNEL(256)
