// SGEMM optimisation ladder, written for gpusim's validation suite from the algorithm described in
// S. Boehm, "How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog" (2022),
// https://siboehm.com/articles/22/CUDA-MMM: C = alpha * A @ B + beta * C, row-major fp32, square N.
// Each step changes one thing against the step it is derived from (7, 8 and 9 from 6; 10 and 11 are warptiling).
// Sizes must be multiples of the block tile (the suite launches them so).

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

// 7: as 6, but the B tile's shared layout is "linearised" so that the 16 threads of a tile row read consecutive
// words: column g of the 8 x 128 tile is stored at (g % TN) * (BN / TN) + g / TN, i.e. the j-th column of every
// thread's TN-wide strip lies in one contiguous run of BN / TN words. The B fill scatters each float4 into four
// scalar stores, and each thread now reads its TN values of B one word at a time (stride BN / TN).
extern "C" __global__ void sgemm_bank_linear(int n, float alpha, const float* A, const float* B, float beta, float* C)
{
    const int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
    const int STRIPS = BN / TN;                   // 16 threads across a tile row
    __shared__ __align__(16) float as[BK * BM];   // transposed: as[k][m]
    __shared__ __align__(16) float bs[BK * BN];   // bs[k][(g % TN) * STRIPS + g / TN]
    int tc = threadIdx.x % STRIPS, tr = threadIdx.x / STRIPS;
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
        float4 vb = reinterpret_cast<const float4*>(&b[(k0 + br) * n + bc * 4])[0];
        float* row = &bs[br * BN];
        row[((bc * 4 + 0) % TN) * STRIPS + (bc * 4 + 0) / TN] = vb.x;
        row[((bc * 4 + 1) % TN) * STRIPS + (bc * 4 + 1) / TN] = vb.y;
        row[((bc * 4 + 2) % TN) * STRIPS + (bc * 4 + 2) / TN] = vb.z;
        row[((bc * 4 + 3) % TN) * STRIPS + (bc * 4 + 3) / TN] = vb.w;
        __syncthreads();
        for (int k = 0; k < BK; ++k) {
            for (int m = 0; m < TM; m += 4) {
                float4 v = reinterpret_cast<const float4*>(&as[k * BM + tr * TM + m])[0];
                ra[m] = v.x; ra[m + 1] = v.y; ra[m + 2] = v.z; ra[m + 3] = v.w;
            }
            for (int j = 0; j < TN; ++j) rb[j] = bs[k * BN + j * STRIPS + tc];
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

// 8: as 6, but each row of the B tile is padded by PAD = 5 extra columns (row stride BN + 5 words) so that
// successive tile rows start in different banks. The rows lose their 16-byte alignment: the B fill is four scalar
// stores, and each thread reads its TN values of B as written, one word at a time (the compiler may pair those it
// can prove aligned).
extern "C" __global__ void sgemm_bank_offset(int n, float alpha, const float* A, const float* B, float beta, float* C)
{
    const int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, PAD = 5;
    const int LDB = BN + PAD;
    __shared__ __align__(16) float as[BK * BM];   // transposed: as[k][m]
    __shared__ __align__(16) float bs[BK * LDB];  // bs[k][c], row stride BN + PAD
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
        float4 vb = reinterpret_cast<const float4*>(&b[(k0 + br) * n + bc * 4])[0];
        bs[br * LDB + bc * 4 + 0] = vb.x;
        bs[br * LDB + bc * 4 + 1] = vb.y;
        bs[br * LDB + bc * 4 + 2] = vb.z;
        bs[br * LDB + bc * 4 + 3] = vb.w;
        __syncthreads();
        for (int k = 0; k < BK; ++k) {
            for (int m = 0; m < TM; m += 4) {
                float4 v = reinterpret_cast<const float4*>(&as[k * BM + tr * TM + m])[0];
                ra[m] = v.x; ra[m + 1] = v.y; ra[m + 2] = v.z; ra[m + 3] = v.w;
            }
            for (int j = 0; j < TN; ++j) rb[j] = bs[k * LDB + tc * TN + j];
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

// 9: the autotuned block tiling: 6's structure with the configuration the article's search chose for the A6000
// (BM = BN = 128, BK = 16, TM = TN = 8, 256 threads): a K step twice as deep, so each thread fills two float4 of
// the A tile and two of the B tile per step and half as many barriers are crossed per FFMA.
extern "C" __global__ void __launch_bounds__(256) sgemm_autotuned(int n, float alpha, const float* A, const float* B,
                                                                  float beta, float* C)
{
    const int BM = 128, BN = 128, BK = 16, TM = 8, TN = 8, NT = 256;
    __shared__ __align__(16) float as[BK * BM];   // transposed: as[k][m]
    __shared__ __align__(16) float bs[BK * BN];
    int tc = threadIdx.x % (BN / TN), tr = threadIdx.x / (BN / TN);
    const float* a = A + blockIdx.y * BM * n;
    const float* b = B + blockIdx.x * BN;
    float acc[TM * TN] = {0.0f};
    float ra[TM], rb[TN];
    // each thread fills one float4 column at rows r, r + stride, ... (a constant trip count)
    const int ASTRIDE = NT / (BK / 4), BSTRIDE = NT / (BN / 4);
    int ar = threadIdx.x / (BK / 4), ac = (threadIdx.x % (BK / 4)) * 4;
    int br = threadIdx.x / (BN / 4), bc = (threadIdx.x % (BN / 4)) * 4;
    for (int k0 = 0; k0 < n; k0 += BK) {
        for (int o = 0; o < BM; o += ASTRIDE) {
            int r = ar + o;
            float4 v = reinterpret_cast<const float4*>(&a[r * n + k0 + ac])[0];
            as[(ac + 0) * BM + r] = v.x;
            as[(ac + 1) * BM + r] = v.y;
            as[(ac + 2) * BM + r] = v.z;
            as[(ac + 3) * BM + r] = v.w;
        }
        for (int o = 0; o < BK; o += BSTRIDE)
            reinterpret_cast<float4*>(&bs[(br + o) * BN + bc])[0] =
                reinterpret_cast<const float4*>(&b[(k0 + br + o) * n + bc])[0];
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

// 11: warptiling with double buffering (the article's A6000 parameters): 256 threads (8 warps side by side), a
// 128 x 256 C tile per block, BK = 16, each warp a 128 x 32 tile walked as WMITER = 2 sub-tiles 64 rows high,
// each thread TM = 8 x TN = 8 of each (128 results). Shared memory holds two stages of the A (transposed) and B
// tiles. The block is split in two halves of 128 threads that each fill a whole stage by themselves: per 2 * BK
// of K, the first half computes on stage 0 while the second half fills stage 1; after a barrier both compute
// stage 1 and stage 0 respectively; after another the first half refills stage 0 with the tile 2 * BK ahead
// while the second half computes stage 1; a third barrier closes the step.
#define DB_BM 128
#define DB_BN 256
#define DB_BK 16
#define DB_HALF 128

__device__ __forceinline__ void db_fill(int n, const float* a, const float* b, float* as, float* bs, int t)
{
    // as in 9: one float4 column per thread at rows r, r + stride, ... (a constant trip count)
    const int ASTRIDE = DB_HALF / (DB_BK / 4), BSTRIDE = DB_HALF / (DB_BN / 4);
    int ar = t / (DB_BK / 4), ac = (t % (DB_BK / 4)) * 4;
    int br = t / (DB_BN / 4), bc = (t % (DB_BN / 4)) * 4;
    for (int o = 0; o < DB_BM; o += ASTRIDE) {
        int r = ar + o;
        float4 v = reinterpret_cast<const float4*>(&a[r * n + ac])[0];
        as[(ac + 0) * DB_BM + r] = v.x;
        as[(ac + 1) * DB_BM + r] = v.y;
        as[(ac + 2) * DB_BM + r] = v.z;
        as[(ac + 3) * DB_BM + r] = v.w;
    }
    for (int o = 0; o < DB_BK; o += BSTRIDE)
        reinterpret_cast<float4*>(&bs[(br + o) * DB_BN + bc])[0] =
            reinterpret_cast<const float4*>(&b[(br + o) * n + bc])[0];
}

__device__ __forceinline__ void db_compute(const float* as, const float* bs, float* acc, int wc, int tr, int tc)
{
    const int WN = 32, WMITER = 2, WSUBM = 64, TM = 8, TN = 8;
    float ra[WMITER * TM], rb[TN];
    for (int k = 0; k < DB_BK; ++k) {
        for (int w = 0; w < WMITER; ++w)
            for (int m = 0; m < TM; m += 4) {
                float4 v = reinterpret_cast<const float4*>(&as[k * DB_BM + w * WSUBM + tr * TM + m])[0];
                ra[w * TM + m] = v.x; ra[w * TM + m + 1] = v.y; ra[w * TM + m + 2] = v.z; ra[w * TM + m + 3] = v.w;
            }
        for (int j = 0; j < TN; j += 4) {
            float4 v = reinterpret_cast<const float4*>(&bs[k * DB_BN + wc * WN + tc * TN + j])[0];
            rb[j] = v.x; rb[j + 1] = v.y; rb[j + 2] = v.z; rb[j + 3] = v.w;
        }
        for (int m = 0; m < WMITER * TM; ++m)
            for (int j = 0; j < TN; ++j) acc[m * TN + j] += ra[m] * rb[j];
    }
}

extern "C" __global__ void __launch_bounds__(256) sgemm_double_buffering(int n, float alpha, const float* A,
                                                                         const float* B, float beta, float* C)
{
    const int WN = 32, WMITER = 2, WSUBM = 64, TM = 8, TN = 8, BK = DB_BK;
    __shared__ __align__(16) float as[2][DB_BK * DB_BM];   // per stage, transposed: as[s][k][m]
    __shared__ __align__(16) float bs[2][DB_BK * DB_BN];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wc = warp;                                          // BN / WN = 8 warps across, one warp down
    int tr = lane / (WN / TN), tc = lane % (WN / TN);
    bool second = threadIdx.x >= DB_HALF;
    int t = threadIdx.x % DB_HALF;
    const float* a = A + blockIdx.y * DB_BM * n;
    const float* b = B + blockIdx.x * DB_BN;
    float acc[WMITER * TM * TN] = {0.0f};
    if (!second) db_fill(n, a, b, as[0], bs[0], t);
    __syncthreads();
    for (int k0 = 0; k0 < n; k0 += 2 * BK) {
        if (!second) {
            db_compute(as[0], bs[0], acc, wc, tr, tc);
            __syncthreads();
            if (k0 + BK < n) db_compute(as[1], bs[1], acc, wc, tr, tc);
            __syncthreads();
            if (k0 + 2 * BK < n) db_fill(n, a + k0 + 2 * BK, b + (k0 + 2 * BK) * n, as[0], bs[0], t);
        } else {
            if (k0 + BK < n) db_fill(n, a + k0 + BK, b + (k0 + BK) * n, as[1], bs[1], t);
            __syncthreads();
            db_compute(as[0], bs[0], acc, wc, tr, tc);
            __syncthreads();
            if (k0 + BK < n) db_compute(as[1], bs[1], acc, wc, tr, tc);
        }
        __syncthreads();
    }
    for (int w = 0; w < WMITER; ++w)
        for (int m = 0; m < TM; ++m)
            for (int j = 0; j < TN; j += 4) {
                int row = blockIdx.y * DB_BM + w * WSUBM + tr * TM + m;
                int col = blockIdx.x * DB_BN + wc * WN + tc * TN + j;
                float4* p = reinterpret_cast<float4*>(&C[row * n + col]);
                float4 c = p[0];
                const float* s = &acc[(w * TM + m) * TN + j];
                c.x = alpha * s[0] + beta * c.x;
                c.y = alpha * s[1] + beta * c.y;
                c.z = alpha * s[2] + beta * c.z;
                c.w = alpha * s[3] + beta * c.w;
                p[0] = c;
            }
}
