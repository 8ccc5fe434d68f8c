// Memory-bound kernels for gpusim's validation suite, written from the published algorithms:
// - copy by access width (grid-stride copy reinterpreting the buffers as 1/2/4/8/16-byte words), as in
//   yencal, "How Data Type Width Affects GPU Memory Throughput" (2025);
// - STREAM-like copy / mul / add / triad / dot on fp64 (J. McCalpin's STREAM kernels, as run by BabelStream);
// - sum reduction: grid-stride accumulation with int/int2/int4 loads, warp shuffle, block shared memory,
//   then one atomicAdd per block (BlockAtomic) or per warp (WarpAtomic), as in yencal, "GPU Parallel
//   Reduction: Algorithm and Optimization Strategies" (2025);
// - a dependent pointer chase (latency), one thread.
#include <stdint.h>

template <typename V>
__device__ void copy_words(V* dst, const V* src, unsigned long long nbytes)
{
    unsigned long long n = nbytes / sizeof(V);
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}

extern "C" __global__ void copy_w1(uint8_t* d, const uint8_t* s, unsigned long long b) { copy_words(d, s, b); }
extern "C" __global__ void copy_w2(uint16_t* d, const uint16_t* s, unsigned long long b) { copy_words(d, s, b); }
extern "C" __global__ void copy_w4(uint32_t* d, const uint32_t* s, unsigned long long b) { copy_words(d, s, b); }
extern "C" __global__ void copy_w8(uint64_t* d, const uint64_t* s, unsigned long long b) { copy_words(d, s, b); }
extern "C" __global__ void copy_w16(uint4* d, const uint4* s, unsigned long long b) { copy_words(d, s, b); }

// STREAM: one element per thread (BabelStream's CUDA kernels are one element per thread too).
extern "C" __global__ void stream_copy(const double* a, double* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i];
}

extern "C" __global__ void stream_mul(double* b, const double* c, double scalar, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = scalar * c[i];
}

extern "C" __global__ void stream_add(const double* a, const double* b, double* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void stream_triad(double* a, const double* b, const double* c, double scalar, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = b[i] + scalar * c[i];
}

__device__ double warp_sum_d(double v)
{
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

// dot: grid-stride partial sums, block reduction, one partial per block (summed on the host).
extern "C" __global__ void stream_dot(const double* a, const double* b, double* partial, int n)
{
    __shared__ double s[32];
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) acc += a[i] * b[i];
    acc = warp_sum_d(acc);
    if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < blockDim.x / 32 ? s[threadIdx.x] : 0.0;
        acc = warp_sum_d(acc);
        if (threadIdx.x == 0) partial[blockIdx.x] = acc;
    }
}

__device__ int warp_sum(int v)
{
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

template <int W>
__device__ int accumulate(const int* in, int n)
{
    int sum = 0;
    int stride = blockDim.x * gridDim.x;
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (W == 1) {
        for (int i = idx; i < n; i += stride) sum += in[i];
    } else if (W == 2) {
        const int2* v = reinterpret_cast<const int2*>(in);
        for (int i = idx; i < n / 2; i += stride) { int2 x = v[i]; sum += x.x + x.y; }
    } else {
        const int4* v = reinterpret_cast<const int4*>(in);
        for (int i = idx; i < n / 4; i += stride) { int4 x = v[i]; sum += x.x + x.y + x.z + x.w; }
    }
    return sum;
}

template <int W>
__device__ void reduce_block_atomic(const int* in, int* out, int n)
{
    __shared__ int s[32];
    int v = warp_sum(accumulate<W>(in, n));
    if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < blockDim.x / 32 ? s[threadIdx.x] : 0;
        v = warp_sum(v);
        if (threadIdx.x == 0) atomicAdd(out, v);
    }
}

template <int W>
__device__ void reduce_warp_atomic(const int* in, int* out, int n)
{
    int v = warp_sum(accumulate<W>(in, n));
    if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}

extern "C" __global__ void reduce_block_w1(const int* in, int* out, int n) { reduce_block_atomic<1>(in, out, n); }
extern "C" __global__ void reduce_block_w2(const int* in, int* out, int n) { reduce_block_atomic<2>(in, out, n); }
extern "C" __global__ void reduce_block_w4(const int* in, int* out, int n) { reduce_block_atomic<4>(in, out, n); }
extern "C" __global__ void reduce_warp_w1(const int* in, int* out, int n) { reduce_warp_atomic<1>(in, out, n); }
extern "C" __global__ void reduce_warp_w2(const int* in, int* out, int n) { reduce_warp_atomic<2>(in, out, n); }
extern "C" __global__ void reduce_warp_w4(const int* in, int* out, int n) { reduce_warp_atomic<4>(in, out, n); }

// Pointer chase: one thread follows next[] for `steps` dependent loads (ld.global.cg: L1 bypassed when
// `bypass_l1`), timing the whole loop in clock64 and writing the cycles per load.
extern "C" __global__ void chase(const unsigned* next, int steps, int bypass_l1, unsigned* sink, long long* cycles)
{
    unsigned j = 0;
    for (int i = 0; i < steps; ++i) j = bypass_l1 ? __ldcg(&next[j]) : next[j];   // warm-up pass
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) j = bypass_l1 ? __ldcg(&next[j]) : next[j];
    long long t1 = clock64();
    sink[0] = j;
    cycles[0] = t1 - t0;
}
