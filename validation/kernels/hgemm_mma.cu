// Tensor-core HGEMM ladder (mma.sync.m16n8k16, fp16 inputs, fp32 accumulate), written for gpusim's validation
// suite from the steps described in yencal, cuda-hgemm-mma (github.com/yencal/cuda-hgemm-mma, README 'Kernel
// Progression'): 01a fragments gathered element by element from shared memory; 01b the same fragments loaded
// with ldmatrix; 02 an XOR swizzle of the shared-memory tiles so that ldmatrix is conflict-free; 03 a 3-stage
// cp.async pipeline (global -> shared without registers, STAGES - 1 tiles in flight).
// C (fp32, n x n) = A (fp16, n x n, row-major) @ B (fp16, n x n, row-major). n must be a multiple of 128.
// Block tile 128 x 128, BK = 32, 8 warps as 2 (M) x 4 (N), each warp a 64 x 32 tile of 4 x 4 m16n8 fragments.
#include <cuda_fp16.h>
#include <stdint.h>

#define BM 128
#define BN 128
#define BK 32

// 16-byte chunk index within a row after the swizzle: A rows hold 4 chunks (64 B), B rows 16 chunks (256 B).
template <bool SWZ> __device__ __forceinline__ int a_chunk(int row, int c) { return SWZ ? c ^ ((row >> 1) & 3) : c; }
template <bool SWZ> __device__ __forceinline__ int b_chunk(int row, int c) { return SWZ ? c ^ (row & 7) : c; }

__device__ __forceinline__ uint32_t smem_addr(const void* p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ uint32_t pack(half lo, half hi)
{
    return static_cast<uint32_t>(__half_as_ushort(lo)) | (static_cast<uint32_t>(__half_as_ushort(hi)) << 16);
}

// One BK = 32 step of a warp's 64 x 32 tile from the shared tiles `as` (128 x 32) and `bs` (32 x 128).
template <bool LDM, bool SWZ>
__device__ __forceinline__ void mma_step(const half* as, const half* bs, float (&acc)[4][4][4], int wm, int wn, int lane)
{
    int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
        uint32_t fa[4][4], fb[4][2];
#pragma unroll
        for (int mi = 0; mi < 4; ++mi) {
            int r0 = wm + mi * 16;
            if (LDM) {
                int r = r0 + lane % 16, c = kk / 8 + lane / 16;
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                             : "=r"(fa[mi][0]), "=r"(fa[mi][1]), "=r"(fa[mi][2]), "=r"(fa[mi][3])
                             : "r"(smem_addr(&as[r * BK + a_chunk<SWZ>(r, c) * 8])));
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    int r = r0 + g + (q % 2) * 8, col = kk + t * 2 + (q / 2) * 8;
                    const half* p = &as[r * BK + a_chunk<SWZ>(r, col / 8) * 8 + col % 8];
                    fa[mi][q] = pack(p[0], p[1]);
                }
            }
        }
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            int c0 = wn + ni * 8;
            if (LDM) {
                int r = kk + lane % 16;
                asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                             : "=r"(fb[ni][0]), "=r"(fb[ni][1])
                             : "r"(smem_addr(&bs[r * BN + b_chunk<SWZ>(r, c0 / 8) * 8])));
            } else {
#pragma unroll
                for (int q = 0; q < 2; ++q) {
                    int r = kk + t * 2 + q * 8, col = c0 + g;
                    half lo = bs[r * BN + b_chunk<SWZ>(r, col / 8) * 8 + col % 8];
                    half hi = bs[(r + 1) * BN + b_chunk<SWZ>(r + 1, col / 8) * 8 + col % 8];
                    fb[ni][q] = pack(lo, hi);
                }
            }
        }
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int ni = 0; ni < 4; ++ni)
                asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                             "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                             : "+f"(acc[mi][ni][0]), "+f"(acc[mi][ni][1]), "+f"(acc[mi][ni][2]),
                               "+f"(acc[mi][ni][3])
                             : "r"(fa[mi][0]), "r"(fa[mi][1]), "r"(fa[mi][2]), "r"(fa[mi][3]),
                               "r"(fb[ni][0]), "r"(fb[ni][1]));
    }
}

__device__ __forceinline__ void store_c(float* C, const float (&acc)[4][4][4], int n, int wm, int wn, int lane)
{
    int g = lane / 4, t = lane % 4;
    for (int mi = 0; mi < 4; ++mi)
        for (int ni = 0; ni < 4; ++ni) {
            int r = blockIdx.y * BM + wm + mi * 16 + g, c = blockIdx.x * BN + wn + ni * 8 + t * 2;
            C[r * n + c] = acc[mi][ni][0];
            C[r * n + c + 1] = acc[mi][ni][1];
            C[(r + 8) * n + c] = acc[mi][ni][2];
            C[(r + 8) * n + c + 1] = acc[mi][ni][3];
        }
}

// 01a / 01b / 02: one shared stage, loaded through registers (16-byte global loads, 16-byte shared stores).
template <bool LDM, bool SWZ>
__device__ void hgemm(const half* A, const half* B, float* C, int n)
{
    __shared__ __align__(128) half as[BM * BK];
    __shared__ __align__(128) half bs[BK * BN];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wm = (warp / 4) * 64, wn = (warp % 4) * 32;
    const half* a = A + blockIdx.y * BM * n;
    const half* b = B + blockIdx.x * BN;
    float acc[4][4][4] = {};
    for (int k0 = 0; k0 < n; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK / 8; i += 256) {          // 128 rows x 4 chunks of 8 halves
            int r = i / 4, c = i % 4;
            *reinterpret_cast<uint4*>(&as[r * BK + a_chunk<SWZ>(r, c) * 8]) =
                *reinterpret_cast<const uint4*>(&a[r * n + k0 + c * 8]);
        }
        for (int i = threadIdx.x; i < BK * BN / 8; i += 256) {          // 32 rows x 16 chunks
            int r = i / 16, c = i % 16;
            *reinterpret_cast<uint4*>(&bs[r * BN + b_chunk<SWZ>(r, c) * 8]) =
                *reinterpret_cast<const uint4*>(&b[(k0 + r) * n + c * 8]);
        }
        __syncthreads();
        mma_step<LDM, SWZ>(as, bs, acc, wm, wn, lane);
        __syncthreads();
    }
    store_c(C, acc, n, wm, wn, lane);
}

// 03: STAGES shared stages filled by cp.async (16 bytes, L1 bypassed) STAGES - 1 tiles ahead of the mma.
#define STAGES 3
__device__ __forceinline__ void load_stage_async(half* as, half* bs, const half* a, const half* b, int n, int k0)
{
    for (int i = threadIdx.x; i < BM * BK / 8; i += 256) {
        int r = i / 4, c = i % 4;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                     :: "r"(smem_addr(&as[r * BK + a_chunk<true>(r, c) * 8])), "l"(&a[r * n + k0 + c * 8]));
    }
    for (int i = threadIdx.x; i < BK * BN / 8; i += 256) {
        int r = i / 16, c = i % 16;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                     :: "r"(smem_addr(&bs[r * BN + b_chunk<true>(r, c) * 8])), "l"(&b[(k0 + r) * n + c * 8]));
    }
}

__device__ void hgemm_stages(const half* A, const half* B, float* C, int n)
{
    __shared__ __align__(128) half as[STAGES][BM * BK];
    __shared__ __align__(128) half bs[STAGES][BK * BN];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wm = (warp / 4) * 64, wn = (warp % 4) * 32;
    const half* a = A + blockIdx.y * BM * n;
    const half* b = B + blockIdx.x * BN;
    float acc[4][4][4] = {};
    int tiles = n / BK;
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) load_stage_async(as[s], bs[s], a, b, n, s * BK);
        asm volatile("cp.async.commit_group;");
    }
    for (int kt = 0; kt < tiles; ++kt) {
        asm volatile("cp.async.wait_group %0;" :: "n"(STAGES - 2));
        __syncthreads();                     // tile kt landed for every thread; stage (kt - 1) % STAGES is free
        int next = kt + STAGES - 1;
        if (next < tiles) load_stage_async(as[next % STAGES], bs[next % STAGES], a, b, n, next * BK);
        asm volatile("cp.async.commit_group;");
        mma_step<true, true>(as[kt % STAGES], bs[kt % STAGES], acc, wm, wn, lane);
    }
    store_c(C, acc, n, wm, wn, lane);
}

extern "C" __global__ void __launch_bounds__(256) hgemm_direct(const half* A, const half* B, float* C, int n)
{
    hgemm<false, false>(A, B, C, n);
}

extern "C" __global__ void __launch_bounds__(256) hgemm_ldmatrix(const half* A, const half* B, float* C, int n)
{
    hgemm<true, false>(A, B, C, n);
}

extern "C" __global__ void __launch_bounds__(256) hgemm_swizzle(const half* A, const half* B, float* C, int n)
{
    hgemm<true, true>(A, B, C, n);
}

extern "C" __global__ void __launch_bounds__(256) hgemm_multistage(const half* A, const half* B, float* C, int n)
{
    hgemm_stages(A, B, C, n);
}
