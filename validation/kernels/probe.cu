// Microbenchmarks ("probes") for gpusim's calibration tables, written here from the usual microbenchmark
// methods (dependent chains timed with clock64, Little's-law streams, L1 requests touching a chosen number of
// lines). validation/hardware.py runs them on a real GPU (CuPy, the driver compiling this PTX) and the suite runs
// the same PTX on gpusim, so a measured and a simulated figure come from one kernel.
#include <stdint.h>

#define FULL 0xffffffffu

// ---- bandwidth at a working set: every thread reads (or writes) 16-byte words buf[i & mask], grid-stride ----
extern "C" __global__ void read_ws(const float4* buf, unsigned long long mask, int iters, float* out)
{
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    float acc = 0.f;
    for (int k = 0; k < iters; ++k, i += stride) {
        float4 v = __ldcg(&buf[i & mask]);
        acc += v.x + v.y + v.z + v.w;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

extern "C" __global__ void write_ws(float4* buf, unsigned long long mask, int iters)
{
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (int k = 0; k < iters; ++k, i += stride) buf[i & mask] = make_float4(k, k, k, k);
}

// ---- loaded latency: each warp keeps exactly one 128-byte request in flight (the next address depends on the
// loaded value, which is 0), so latency = cycles / iters and bandwidth = bytes / time (Little's law) ----
extern "C" __global__ void chain_read(const unsigned* buf, unsigned long long mask, int iters, long long* cycles,
                                      unsigned* sink)
{
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned s = 0;
    long long t0 = clock64();
    for (int k = 0; k < iters; ++k) {
        unsigned v = __ldcg(&buf[i & mask]);
        s += v;
        i += stride + v;
    }
    long long t1 = clock64();
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if ((threadIdx.x & 31) == 0) cycles[t / 32] = t1 - t0;
    if (s) sink[t] = s;
}

// ---- loaded latency under copy traffic: as chain_read, but each loaded word is stored to dst (a read and a
// write stream of the same size), so the read latency is the one a copy kernel's loads see ----
extern "C" __global__ void chain_copy(const unsigned* src, unsigned* dst, unsigned long long mask, int iters,
                                      long long* cycles)
{
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    long long t0 = clock64();
    for (int k = 0; k < iters; ++k) {
        unsigned v = __ldcg(&src[i & mask]);
        dst[i & mask] = v;
        i += stride + v;
    }
    long long t1 = clock64();
    if ((threadIdx.x & 31) == 0) cycles[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = t1 - t0;
}

// ---- L1 request cost by the number of 128-byte lines it touches: lane l reads word l / lines of line
// l % lines; 8 line sets (32 KB) rotate, so after the first pass every load hits L1 ----
extern "C" __global__ void l1_lines(const float* buf, int lines, int iters, float* out)
{
    int lane = threadIdx.x & 31;
    int off = (lane % lines) * 32 + lane / lines;
    float acc = 0.f;
    for (int k = 0; k < iters; ++k) acc += buf[((k & 7) << 10) + off];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// ---- shared-memory throughput by bank conflict: lane l reads (or writes) word l * stride of a 4096-word tile
// (stride 1: conflict-free; 2^j: min(32, 2^j)-way conflicts; 33: conflict-free), volatile so every access issues
extern "C" __global__ void lds_stride(int stride, int iters, float* out)
{
    __shared__ float tile[4096 + 4];
    volatile float* s = tile;
    for (int k = threadIdx.x; k < 4096 + 4; k += blockDim.x) s[k] = (float)k;
    __syncthreads();
    int base = ((threadIdx.x & 31) * stride) & 4095;
    float acc = 0.f;
    for (int k = 0; k < iters; ++k) acc += s[base + (k & 3)];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

extern "C" __global__ void sts_stride(int stride, int iters, float* out)
{
    __shared__ float tile[4096 + 4];
    volatile float* s = tile;
    int base = ((threadIdx.x & 31) * stride) & 4095;
    for (int k = 0; k < iters; ++k) s[base + (k & 3)] = (float)k;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x & 4095];
}

// ---- global stores by sector coverage: lane l stores word l * spread of its warp's slice of an L2-resident
// buffer (spread 1: 4 full sectors per request; 8: 32 sectors with 4 bytes each) ----
extern "C" __global__ void st_spread(float* buf, int spread, unsigned long long mask, int iters)
{
    unsigned long long warp = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) / 32;
    unsigned long long warps = (unsigned long long)blockDim.x * gridDim.x / 32;
    unsigned long long lane = threadIdx.x & 31;
    for (int k = 0; k < iters; ++k)
        buf[((warp + k * warps) * 32 * spread + lane * spread) & mask] = (float)k;
}

// ---- dependent-instruction latencies: thread 0 of one warp times `iters` links of a chain with clock64 ----
#define CHAIN_KERNEL(NAME, T, INIT, STEP)                                                              \
    extern "C" __global__ void NAME(int iters, long long* cycles, float* out)                         \
    {                                                                                                  \
        T x = INIT;                                                                                    \
        long long t0 = clock64();                                                                      \
        for (int k = 0; k < iters; ++k) { STEP; }                                                      \
        long long t1 = clock64();                                                                      \
        if (threadIdx.x == 0) cycles[0] = t1 - t0;                                                     \
        out[threadIdx.x] = (float)x;                                                                   \
    }

CHAIN_KERNEL(lat_ffma, float, threadIdx.x * 1e-3f,
             asm volatile("fma.rn.f32 %0, %0, %0, %0;" : "+f"(x)))
CHAIN_KERNEL(lat_dfma, double, threadIdx.x * 1e-3,
             asm volatile("fma.rn.f64 %0, %0, %0, %0;" : "+d"(x)))
CHAIN_KERNEL(lat_imad, unsigned, threadIdx.x,
             asm volatile("mad.lo.u32 %0, %0, %0, %0;" : "+r"(x)))
CHAIN_KERNEL(lat_ex2, float, threadIdx.x * 1e-3f,
             asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x)))
CHAIN_KERNEL(lat_rsqrt, float, threadIdx.x + 1.f,
             asm volatile("rsqrt.approx.ftz.f32 %0, %0;" : "+f"(x)))
CHAIN_KERNEL(lat_cvt, float, threadIdx.x * 1.f,
             asm volatile("{ .reg .s32 t; cvt.rzi.s32.f32 t, %0; cvt.rn.f32.s32 %0, t; }" : "+f"(x)))
CHAIN_KERNEL(lat_shfl, unsigned, threadIdx.x,
             asm volatile("shfl.sync.bfly.b32 %0, %0, 1, 31, -1;" : "+r"(x)))

// shared-memory pointer chase (s[j] holds the next index: j + 1 mod 256, spaced so no two links share a bank row)
extern "C" __global__ void lat_lds(int iters, long long* cycles, float* out)
{
    __shared__ unsigned s[1024];
    for (int k = threadIdx.x; k < 1024; k += blockDim.x) s[k] = (k + 33) & 1023;
    __syncthreads();
    unsigned j = threadIdx.x;
    long long t0 = clock64();
    for (int k = 0; k < iters; ++k) j = s[j];
    long long t1 = clock64();
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
    out[threadIdx.x] = (float)j;
}

// atomics whose returned value feeds the next address: shared and global
extern "C" __global__ void lat_atom_shared(int iters, long long* cycles, float* out)
{
    __shared__ unsigned s[64];
    if (threadIdx.x < 64) s[threadIdx.x] = 0;
    __syncthreads();
    unsigned v = 0;
    long long t0 = clock64();
    for (int k = 0; k < iters; ++k) v = atomicAdd(&s[(v & 0x80000000u) >> 26], 1u);
    long long t1 = clock64();
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
    out[threadIdx.x] = (float)v;
}

extern "C" __global__ void lat_atom_global(unsigned* g, int iters, long long* cycles, float* out)
{
    unsigned v = 0;
    long long t0 = clock64();
    for (int k = 0; k < iters; ++k) v = atomicAdd(&g[(v & 0x80000000u) >> 26], 1u);
    long long t1 = clock64();
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
    out[threadIdx.x] = (float)v;
}

// a block of blockDim threads passes `iters` barriers; thread 0 times them
extern "C" __global__ void lat_bar(int iters, long long* cycles, float* out)
{
    long long t0 = clock64();
    for (int k = 0; k < iters; ++k) __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
    out[threadIdx.x] = 0.f;
}

// ---- block launch rate and kernel overhead: blocks that do nothing but exit ----
extern "C" __global__ void empty_block(float* out)
{
    if (threadIdx.x == 1024) out[0] = 0.f;   // never true: the block exits at once
}

// ---- the SM clock: one thread spins for `cycles` clock64 ticks (the host divides by the event time) ----
extern "C" __global__ void spin(long long cycles, long long* out)
{
    long long t0 = clock64(), t = t0;
    while (t - t0 < cycles) t = clock64();
    out[0] = t - t0;
}
