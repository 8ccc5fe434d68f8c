// gemm_wgmma: C = A * B^T on Hopper's warpgroup MMA, written here from the PTX ISA: BF16 inputs, FP32
// accumulators. A is M x K row-major, B is N x K row-major (K-major, a linear layer's weights), C is M x N
// row-major fp32. K must be a multiple of 8 (16-byte chunks); any M and N (edge tiles are zero-filled).
//
// A block of 256 threads (2 consumer warpgroups) computes a BM x BN = 128 x 256 tile of C: warpgroup w the
// 64 rows 64w..64w+63, as one wgmma.mma_async.m64n256k16.f32.bf16.bf16 per 16 elements of K (128 fp32
// accumulators per thread). K advances in slices of BK = 64 bf16 = 128 bytes per row: the slice of A
// (128 rows) and of B (256 rows) go global -> shared with cp.async (16 bytes per request, zero-fill past the
// edges) in the layout a 128-byte-swizzle K-major matrix descriptor describes: row x at x * 128 bytes from a
// 1024-aligned base, its 16-byte chunk c at chunk c ^ (x % 8) (PTX ISA "Matrix Descriptor Format" and
// "Canonical Layouts"; SBO = 1024, the next 8 rows). The 4 wgmmas of a slice advance the descriptors' start
// by 32 bytes each (16 bf16 of K).
//
// Pipeline: STAGES = 4 shared buffers, AHEAD = 2 slices loaded ahead. Iteration kt waits for its own
// cp.async group of slice kt (cp.async.wait_group AHEAD - 1), a __syncthreads makes every thread's copies of
// slice kt visible and tells every thread that the other warpgroup's wgmmas of slice kt - 2 are complete
// (each warpgroup ends an iteration with wgmma.wait_group 1, all but the slice it just issued); the 4 wgmmas
// of slice kt are issued with the refill of slice kt + AHEAD into the buffer of slice kt - 2 after the first. So
// the tensor pipe always has the current slice's wgmmas and the loads have two slices (2 x 1024 tensor
// cycles on h100) to arrive.
// Launch: grid (ceil(N / 256), ceil(M / 128)), 256 threads, 197632 bytes of dynamic shared memory (4 x 48 KB
// stages + 1024 for the 1024-byte alignment of the swizzle pattern).
#include <cstdint>

#define BM 128
#define BN 256
#define BK 64                          // bf16 elements per row of a slice: 128 bytes, one swizzle row
#define THREADS 256
#define STAGES 4
#define AHEAD 2                        // slices in flight ahead of the one computed
#define A_BYTES (BM * 128)             // one stage of A: 16 KB
#define B_BYTES (BN * 128)             // one stage of B: 32 KB
#define STAGE_BYTES (A_BYTES + B_BYTES)

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, uint32_t src_size) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(dst), "l"(src), "r"(src_size) : "memory");
}

// 128-byte swizzle, K-major: SBO = 1024 bytes (8 rows of 128 bytes), LBO unused (1 by convention),
// layout type 1 in bits 62-63.
__device__ __forceinline__ uint64_t desc_128b(uint32_t addr) {
    return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32)
           | (uint64_t(1) << 62);
}

// One thread's pieces of a K slice. Thread t copies chunk c = t % 8 of rows x = t / 8 + 32 i (i = 0 .. PIECES - 1)
// of the slice: x % 8 = (t / 8) % 8 for every i, so the swizzled chunk c ^ (x % 8) is the same for all of a
// thread's pieces and piece i lands 32 x 128 = 4096 bytes after piece 0. Each piece's row address and
// validity (zero-fill past M or N: src_size 0, with the address of a row that exists) are worked out once,
// before the mainloop, so that a piece costs an address add and the cp.async (gpusim times the PTX as written).
template <int PIECES>
struct Rows {
    const uint8_t* ptr[PIECES];        // piece i's chunk at k = 0
    uint32_t size[PIECES];             // 16, or 0 past the matrix's last row

    __device__ __forceinline__ void init(const uint16_t* g, int row0, int nrows, int K) {
        int x = threadIdx.x >> 3, c = threadIdx.x & 7;
#pragma unroll
        for (int i = 0; i < PIECES; ++i) {
            int row = row0 + x + 32 * i;
            ptr[i] = reinterpret_cast<const uint8_t*>(g + (size_t)(row < nrows ? row : 0) * K + c * 8);
            size[i] = row < nrows ? 16 : 0;
        }
    }

    // the slice at element k0 into dst (this thread's swizzled chunk of row t / 8)
    __device__ __forceinline__ void load(uint32_t dst, int k0, int K) const {
        if (k0 + BK <= K) {                                   // a whole slice: every chunk is in K
#pragma unroll
            for (int i = 0; i < PIECES; ++i) cp_async_16(dst + i * 4096, ptr[i] + 2 * k0, size[i]);
        } else {                                              // the last, partial slice: zero-fill past K
            bool in_k = k0 + (threadIdx.x & 7) * 8 < K;
#pragma unroll
            for (int i = 0; i < PIECES; ++i)
                cp_async_16(dst + i * 4096, in_k ? ptr[i] + 2 * k0 : ptr[i], in_k ? size[i] : 0);
        }
    }
};

__device__ __forceinline__ void wgmma_m64n256k16(float (&acc)[128], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1, 0, 0;\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]), "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]), "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]), "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]), "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]), "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63]), "+f"(acc[64]), "+f"(acc[65]), "+f"(acc[66]), "+f"(acc[67]), "+f"(acc[68]), "+f"(acc[69]), "+f"(acc[70]), "+f"(acc[71]), "+f"(acc[72]), "+f"(acc[73]), "+f"(acc[74]), "+f"(acc[75]), "+f"(acc[76]), "+f"(acc[77]), "+f"(acc[78]), "+f"(acc[79]), "+f"(acc[80]), "+f"(acc[81]), "+f"(acc[82]), "+f"(acc[83]), "+f"(acc[84]), "+f"(acc[85]), "+f"(acc[86]), "+f"(acc[87]), "+f"(acc[88]), "+f"(acc[89]), "+f"(acc[90]), "+f"(acc[91]), "+f"(acc[92]), "+f"(acc[93]), "+f"(acc[94]), "+f"(acc[95]), "+f"(acc[96]), "+f"(acc[97]), "+f"(acc[98]), "+f"(acc[99]), "+f"(acc[100]), "+f"(acc[101]), "+f"(acc[102]), "+f"(acc[103]), "+f"(acc[104]), "+f"(acc[105]), "+f"(acc[106]), "+f"(acc[107]), "+f"(acc[108]), "+f"(acc[109]), "+f"(acc[110]), "+f"(acc[111]), "+f"(acc[112]), "+f"(acc[113]), "+f"(acc[114]), "+f"(acc[115]), "+f"(acc[116]), "+f"(acc[117]), "+f"(acc[118]), "+f"(acc[119]), "+f"(acc[120]), "+f"(acc[121]), "+f"(acc[122]), "+f"(acc[123]), "+f"(acc[124]), "+f"(acc[125]), "+f"(acc[126]), "+f"(acc[127])
                 : "l"(da), "l"(db));
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_wgmma(const uint16_t* __restrict__ A, const uint16_t* __restrict__ B, float* __restrict__ C, int M, int N,
           int K) {
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = (smem_addr(smem_raw) + 1023) & ~1023u;    // the swizzle repeats every 1024 bytes
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int wg = threadIdx.x / 128;
    const int kslices = (K + BK - 1) / BK;

    // this thread's pieces: the 128 rows of A in 4, the 256 rows of B in 8; its swizzled chunk of row t / 8
    Rows<BM / 32> rows_a;
    Rows<BN / 32> rows_b;
    rows_a.init(A, m0, M, K);
    rows_b.init(B, n0, N, K);
    const uint32_t chunk = (threadIdx.x >> 3) * 128 + (((threadIdx.x & 7) ^ ((threadIdx.x >> 3) & 7)) << 4);

    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;

#pragma unroll
    for (int s = 0; s < AHEAD; ++s) {
        if (s < kslices) {
            rows_a.load(base + s * STAGE_BYTES + chunk, s * BK, K);
            rows_b.load(base + s * STAGE_BYTES + A_BYTES + chunk, s * BK, K);
        }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }

    for (int kt = 0; kt < kslices; ++kt) {
        asm volatile("cp.async.wait_group %0;\n" :: "n"(AHEAD - 1) : "memory");
        __syncthreads();
        // slice kt is in shared memory; both warpgroups' wgmmas of slice kt - 2 are complete. The first wgmma
        // goes first, so that the tensor pipe, still busy with the last wgmmas of slice kt - 1, gets its next
        // one at once; then the refill of slice kt + AHEAD into the buffer of slice kt - 2, issued while that
        // wgmma occupies the pipe (a whole slice earlier than after the 4 wgmmas: the loads have ~2 slices of
        // tensor time to arrive); then the other 3 wgmmas.
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        const uint32_t buf = base + (kt % STAGES) * STAGE_BYTES;
        const uint64_t da = desc_128b(buf + wg * 64 * 128);
        const uint64_t db = desc_128b(buf + A_BYTES);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        wgmma_m64n256k16(acc, da, db);
        const int next = kt + AHEAD;
        if (next < kslices) {
            const uint32_t nbuf = base + (next % STAGES) * STAGE_BYTES + chunk;
            rows_a.load(nbuf, next * BK, K);
            rows_b.load(nbuf + A_BYTES, next * BK, K);
        }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
#pragma unroll
        for (int k = 1; k < BK / 16; ++k)
            wgmma_m64n256k16(acc, da + 2 * k, db + 2 * k);        // + 32 bytes (>> 4) per 16 elements of K
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");   // slice kt - 1's wgmmas are done
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");

    // D fragment (PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16"): warp q of the warpgroup holds rows
    // 16q..16q+15; register i is row g + 8 ((i % 4) / 2), column 8 (i / 4) + 2 t + i % 2 (g = lane / 4, t = lane % 4)
    const int lane = threadIdx.x & 31, q = (threadIdx.x / 32) & 3;
    const int row0 = m0 + wg * 64 + q * 16 + (lane >> 2);
    const int col0 = n0 + 2 * (lane & 3);
#pragma unroll
    for (int i = 0; i < 128; i += 2) {
        int row = row0 + 8 * ((i % 4) / 2), col = col0 + 8 * (i / 4);
        if (row < M) {
            float* dst = C + (size_t)row * N + col;
            if (col + 1 < N && (N & 1) == 0) {
                *reinterpret_cast<float2*>(dst) = make_float2(acc[i], acc[i + 1]);
            } else {
                if (col < N) dst[0] = acc[i];
                if (col + 1 < N) dst[1] = acc[i + 1];
            }
        }
    }
}
