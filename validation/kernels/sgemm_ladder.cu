// SGEMM optimisation ladder, written for gpusim's validation suite from the algorithm described in
// S. Boehm, "How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog" (2022),
// https://siboehm.com/articles/22/CUDA-MMM: C = alpha * A @ B + beta * C, row-major fp32, square N.
// Each step changes one thing (10 follows 6: steps 7-9 and 11 of the article are not written here). Sizes must be
// multiples of the block tile (the suite launches them so).

#define DIV(a, b) (((a) + (b) - 1) / (b))

// 1: one thread per C element; threadIdx.x walks rows, so a warp's loads of A are strided (uncoalesced).
extern "C" __global__ void sgemm_naive(int n, float alpha, const float* A, const float* B, float beta, float* C)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) {
        float acc = 0.0f;
        for (int k = 0; k < n; ++k) acc += A[row * n + k] * B[k * n + col];
        C[row * n + col] = alpha * acc + beta * C[row * n + col];
    }
}

// 2: the same work, threads of a warp take consecutive columns (coalesced B and C, broadcast A).
extern "C" __global__ void sgemm_coalesced(int n, float alpha, const float* A, const float* B, float beta, float* C)
{
    const int T = 32;
    int row = blockIdx.x * T + threadIdx.x / T;
    int col = blockIdx.y * T + threadIdx.x % T;
    if (row < n && col < n) {
        float acc = 0.0f;
        for (int k = 0; k < n; ++k) acc += A[row * n + k] * B[k * n + col];
        C[row * n + col] = alpha * acc + beta * C[row * n + col];
    }
}

// 3: 32x32 tiles of A and B staged through shared memory, one C element per thread.
extern "C" __global__ void sgemm_smem(int n, float alpha, const float* A, const float* B, float beta, float* C)
{
    const int T = 32;
    __shared__ float as[T * T];
    __shared__ float bs[T * T];
    int tr = threadIdx.x / T, tc = threadIdx.x % T;
    const float* a = A + blockIdx.x * T * n;
    const float* b = B + blockIdx.y * T;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += T) {
        as[tr * T + tc] = a[tr * n + tc + k0];
        bs[tr * T + tc] = b[(tr + k0) * n + tc];
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += as[tr * T + k] * bs[k * T + tc];
        __syncthreads();
    }
    int i = (blockIdx.x * T + tr) * n + blockIdx.y * T + tc;
    C[i] = alpha * acc + beta * C[i];
}

// 4: 1D block tiling: a 64x64 C tile per 512-thread block, BK = 8, each thread 8 results down a column.
extern "C" __global__ void sgemm_blocktile_1d(int n, float alpha, const float* A, const float* B, float beta, float* C)
{
    const int BM = 64, BN = 64, BK = 8, TM = 8;
    __shared__ float as[BM * BK];
    __shared__ float bs[BK * BN];
    int tc = threadIdx.x % BN, tr = threadIdx.x / BN;          // tr in [0, 8)
    int ar = threadIdx.x / BK, ac = threadIdx.x % BK;          // A tile: 64 rows x 8
    int br = threadIdx.x / BN, bc = threadIdx.x % BN;          // B tile: 8 rows x 64
    const float* a = A + blockIdx.y * BM * n;
    const float* b = B + blockIdx.x * BN;
    float acc[TM] = {0.0f};
    for (int k0 = 0; k0 < n; k0 += BK) {
        as[ar * BK + ac] = a[ar * n + k0 + ac];
        bs[br * BN + bc] = b[(k0 + br) * n + bc];
        __syncthreads();
        for (int k = 0; k < BK; ++k) {
            float bv = bs[k * BN + tc];
            for (int m = 0; m < TM; ++m) acc[m] += as[(tr * TM + m) * BK + k] * bv;
        }
        __syncthreads();
    }
    for (int m = 0; m < TM; ++m) {
        int i = (blockIdx.y * BM + tr * TM + m) * n + blockIdx.x * BN + tc;
        C[i] = alpha * acc[m] + beta * C[i];
    }
}

// 5: 2D block tiling: a 128x128 C tile per 256-thread block, BK = 8, each thread an 8x8 sub-tile held in
// registers, its row of A and column of B cached in registers for each k.
extern "C" __global__ void sgemm_blocktile_2d(int n, float alpha, const float* A, const float* B, float beta, float* C)
{
    const int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, NT = 256;
    __shared__ float as[BM * BK];
    __shared__ float bs[BK * BN];
    int tc = threadIdx.x % (BN / TN), tr = threadIdx.x / (BN / TN);
    const float* a = A + blockIdx.y * BM * n;
    const float* b = B + blockIdx.x * BN;
    float acc[TM * TN] = {0.0f};
    float ra[TM], rb[TN];
    for (int k0 = 0; k0 < n; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += NT) as[i] = a[(i / BK) * n + k0 + i % BK];
        for (int i = threadIdx.x; i < BK * BN; i += NT) bs[i] = b[(k0 + i / BN) * n + i % BN];
        __syncthreads();
        for (int k = 0; k < BK; ++k) {
            for (int m = 0; m < TM; ++m) ra[m] = as[(tr * TM + m) * BK + k];
            for (int j = 0; j < TN; ++j) rb[j] = bs[k * BN + tc * TN + j];
            for (int m = 0; m < TM; ++m)
                for (int j = 0; j < TN; ++j) acc[m * TN + j] += ra[m] * rb[j];
        }
        __syncthreads();
    }
    for (int m = 0; m < TM; ++m)
        for (int j = 0; j < TN; ++j) {
            int i = (blockIdx.y * BM + tr * TM + m) * n + blockIdx.x * BN + tc * TN + j;
            C[i] = alpha * acc[m * TN + j] + beta * C[i];
        }
}

// 6: as 5 with 128-bit accesses: float4 global loads, A stored transposed in shared memory so that both
// register fills are float4 shared loads, float4 loads/stores of C.
extern "C" __global__ void sgemm_vectorized(int n, float alpha, const float* A, const float* B, float beta, float* C)
{
    const int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
    __shared__ __align__(16) float as[BK * BM];   // transposed: as[k][m]
    __shared__ __align__(16) float bs[BK * BN];
    int tc = threadIdx.x % (BN / TN), tr = threadIdx.x / (BN / TN);
    int ar = threadIdx.x / (BK / 4), ac = threadIdx.x % (BK / 4);   // 128 rows x 2 float4
    int br = threadIdx.x / (BN / 4), bc = threadIdx.x % (BN / 4);   // 8 rows x 32 float4
    const float* a = A + blockIdx.y * BM * n;
    const float* b = B + blockIdx.x * BN;
    float acc[TM * TN] = {0.0f};
    float ra[TM], rb[TN];
    for (int k0 = 0; k0 < n; k0 += BK) {
        float4 va = reinterpret_cast<const float4*>(&a[ar * n + k0 + ac * 4])[0];
        as[(ac * 4 + 0) * BM + ar] = va.x;
        as[(ac * 4 + 1) * BM + ar] = va.y;
        as[(ac * 4 + 2) * BM + ar] = va.z;
        as[(ac * 4 + 3) * BM + ar] = va.w;
        reinterpret_cast<float4*>(&bs[br * BN + bc * 4])[0] =
            reinterpret_cast<const float4*>(&b[(k0 + br) * n + bc * 4])[0];
        __syncthreads();
        for (int k = 0; k < BK; ++k) {
            for (int m = 0; m < TM; m += 4) {
                float4 v = reinterpret_cast<const float4*>(&as[k * BM + tr * TM + m])[0];
                ra[m] = v.x; ra[m + 1] = v.y; ra[m + 2] = v.z; ra[m + 3] = v.w;
            }
            for (int j = 0; j < TN; j += 4) {
                float4 v = reinterpret_cast<const float4*>(&bs[k * BN + tc * TN + j])[0];
                rb[j] = v.x; rb[j + 1] = v.y; rb[j + 2] = v.z; rb[j + 3] = v.w;
            }
            for (int m = 0; m < TM; ++m)
                for (int j = 0; j < TN; ++j) acc[m * TN + j] += ra[m] * rb[j];
        }
        __syncthreads();
    }
    for (int m = 0; m < TM; ++m)
        for (int j = 0; j < TN; j += 4) {
            float4* p = reinterpret_cast<float4*>(&C[(blockIdx.y * BM + tr * TM + m) * n + blockIdx.x * BN + tc * TN + j]);
            float4 c = p[0];
            c.x = alpha * acc[m * TN + j] + beta * c.x;
            c.y = alpha * acc[m * TN + j + 1] + beta * c.y;
            c.z = alpha * acc[m * TN + j + 2] + beta * c.z;
            c.w = alpha * acc[m * TN + j + 3] + beta * c.w;
            p[0] = c;
        }
}

// 10: warptiling: 128 threads (4 warps as 2 x 2), a 128x128 C tile per block, BK = 16; each warp owns a 64x64
// tile walked as WNITER = 4 sub-tiles 16 columns wide, each thread TM = 8 rows x TN = 4 columns of every
// sub-tile (128 results); A transposed in shared memory, 128-bit global and shared accesses (the article's
// final A6000 parameters).
extern "C" __global__ void __launch_bounds__(128) sgemm_warptiling(int n, float alpha, const float* A, const float* B,
                                                                   float beta, float* C)
{
    const int BM = 128, BN = 128, BK = 16, WM = 64, WN = 64, WNITER = 4, TM = 8, TN = 4, NT = 128;
    const int WSUBN = WN / WNITER;
    __shared__ __align__(16) float as[BK * BM];   // transposed: as[k][m]
    __shared__ __align__(16) float bs[BK * BN];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wr = warp / (BN / WN), wc = warp % (BN / WN);
    int tr = lane / (WSUBN / TN), tc = lane % (WSUBN / TN);
    const float* a = A + blockIdx.y * BM * n;
    const float* b = B + blockIdx.x * BN;
    float acc[TM * WNITER * TN] = {0.0f};
    float ra[TM], rb[WNITER * TN];
    for (int k0 = 0; k0 < n; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK / 4; i += NT) {
            int r = i / (BK / 4), c = (i % (BK / 4)) * 4;
            float4 v = reinterpret_cast<const float4*>(&a[r * n + k0 + c])[0];
            as[(c + 0) * BM + r] = v.x;
            as[(c + 1) * BM + r] = v.y;
            as[(c + 2) * BM + r] = v.z;
            as[(c + 3) * BM + r] = v.w;
        }
        for (int i = threadIdx.x; i < BK * BN / 4; i += NT) {
            int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
            reinterpret_cast<float4*>(&bs[r * BN + c])[0] = reinterpret_cast<const float4*>(&b[(k0 + r) * n + c])[0];
        }
        __syncthreads();
        for (int k = 0; k < BK; ++k) {
            for (int m = 0; m < TM; m += 4) {
                float4 v = reinterpret_cast<const float4*>(&as[k * BM + wr * WM + tr * TM + m])[0];
                ra[m] = v.x; ra[m + 1] = v.y; ra[m + 2] = v.z; ra[m + 3] = v.w;
            }
            for (int w = 0; w < WNITER; ++w) {
                float4 v = reinterpret_cast<const float4*>(&bs[k * BN + wc * WN + w * WSUBN + tc * TN])[0];
                rb[w * TN] = v.x; rb[w * TN + 1] = v.y; rb[w * TN + 2] = v.z; rb[w * TN + 3] = v.w;
            }
            for (int m = 0; m < TM; ++m)
                for (int j = 0; j < WNITER * TN; ++j) acc[m * WNITER * TN + j] += ra[m] * rb[j];
        }
        __syncthreads();
    }
    for (int m = 0; m < TM; ++m)
        for (int w = 0; w < WNITER; ++w) {
            int row = blockIdx.y * BM + wr * WM + tr * TM + m;
            int col = blockIdx.x * BN + wc * WN + w * WSUBN + tc * TN;
            float4* p = reinterpret_cast<float4*>(&C[row * n + col]);
            float4 c = p[0];
            const float* s = &acc[m * WNITER * TN + w * TN];
            c.x = alpha * s[0] + beta * c.x;
            c.y = alpha * s[1] + beta * c.y;
            c.z = alpha * s[2] + beta * c.z;
            c.w = alpha * s[3] + beta * c.w;
            p[0] = c;
        }
}
