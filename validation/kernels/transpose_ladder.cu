// Matrix-transpose ladder, written for gpusim's validation suite from the algorithm described in
// M. Harris, "An Efficient Matrix Transpose in CUDA C/C++" (NVIDIA blog, 2013) and the H100 reproduction by
// yencal, "Optimizing GPU Matrix Transpose: From 14% to 88% of Peak Bandwidth" (2025):
// out[x][y] = in[y][x], square N x N fp32, 32x32 tiles. N must be a multiple of 32.

// Naive: 32x32 threads, coalesced reads, 32-way scattered writes.
extern "C" __global__ void tr_naive(const float* in, float* out, int n)
{
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    out[x * n + y] = in[y * n + x];
}

// Tiled through shared memory without padding: the column read is a 32-way bank conflict.
extern "C" __global__ void tr_tiled(const float* in, float* out, int n)
{
    __shared__ float t[32][32];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    t[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    out[y * n + x] = t[threadIdx.x][threadIdx.y];
}

// As tr_tiled with one column of padding: conflict-free.
extern "C" __global__ void tr_padded(const float* in, float* out, int n)
{
    __shared__ float t[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    t[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    out[y * n + x] = t[threadIdx.x][threadIdx.y];
}

// Padded and coarsened: a 32 x ROWS block moves a 32x32 tile, each thread 32 / ROWS elements.
template <int ROWS>
__device__ void tr_coarsen(const float* in, float* out, int n)
{
    __shared__ float t[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
#pragma unroll
    for (int j = 0; j < 32; j += ROWS) t[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
#pragma unroll
    for (int j = 0; j < 32; j += ROWS) out[(y + j) * n + x] = t[threadIdx.x][threadIdx.y + j];
}

extern "C" __global__ void tr_coarsen2(const float* in, float* out, int n) { tr_coarsen<16>(in, out, n); }
extern "C" __global__ void tr_coarsen4(const float* in, float* out, int n) { tr_coarsen<8>(in, out, n); }
extern "C" __global__ void tr_coarsen8(const float* in, float* out, int n) { tr_coarsen<4>(in, out, n); }
