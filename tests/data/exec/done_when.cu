// The issue's "Done when" kernels: a shared-memory reduction, a warp-shuffle reduction, a histogram with
// atomics, a 2D-grid matrix multiply, double-precision math, 64-bit integer math.

__global__ void block_reduce(const float* in, float* partial, int n)
{
    extern __shared__ float cache[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x * 2 + t;
    float s = 0.0f;
    if (i < n) s = in[i];
    if (i + blockDim.x < n) s += in[i + blockDim.x];
    cache[t] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) cache[t] += cache[t + stride];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = cache[0];
}

__global__ void shuffle_reduce(const int* in, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

__global__ void histogram(const unsigned* data, int n, unsigned* bins, int nbins)
{
    extern __shared__ unsigned local_bins[];
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) local_bins[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local_bins[data[i] % nbins], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) atomicAdd(&bins[b], local_bins[b]);
}

__global__ void matmul_2d(const float* a, const float* b, float* c, int m, int k, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int j = 0; j < k; j++) acc = fmaf(a[row * k + j], b[j * n + col], acc);
    c[row * n + col] = acc;
}

__global__ void double_math(const double* x, double* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    double r = sqrt(v * v + 1.0) / (v + 3.0);
    y[i] = fma(r, v, -0.125) + (double)(i % 7) * 0.5;
}

__global__ void int64_math(const long long* x, long long* y, unsigned long long* z, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long v = x[i];
    unsigned long long h = (unsigned long long)v * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    y[i] = v / 1000003 - v % 97 + (v >> 3);
    z[i] = h + (unsigned long long)(v < 0 ? -v : v) % 1000000007ull;
}
