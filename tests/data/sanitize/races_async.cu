// Kernels for gpusim's racecheck tests of the shared-memory accesses that are not plain ld/st
// (tests/test_racecheck_async.py): ldmatrix, stmatrix, cp.async, wmma fragments and atomics, each with a
// planted race (no barrier between two warps' accesses) and its race-free version (__syncthreads() between
// them). Launch with 64 threads (two warps). Compiled by regenerate.sh (nvcc -arch=sm_90).
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

// warp 0 writes an 8x8 b16 matrix (word t = t | (t + 100) << 16), warp 1 reads it with ldmatrix.x1
__device__ void ldmatrix_body(unsigned *out, bool sync)
{
    __shared__ __align__(16) unsigned tile[32];
    int t = threadIdx.x;
    if (t < 32) tile[t] = t | (t + 100) << 16;
    if (sync) __syncthreads();
    if (t >= 32) {
        unsigned address = (unsigned)__cvta_generic_to_shared(&tile[(t % 8) * 4]);
        unsigned r;
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(address));
        out[t - 32] = r;
    }
}
extern "C" __global__ void ldmatrix_race(unsigned *out) { ldmatrix_body(out, false); }
extern "C" __global__ void ldmatrix_ok(unsigned *out) { ldmatrix_body(out, true); }

// warp 0 writes the matrix with stmatrix.x1 (lane l's register: l | (l + 100) << 16), warp 1 reads its words
__device__ void stmatrix_body(unsigned *out, bool sync)
{
    __shared__ __align__(16) unsigned tile[32];
    int t = threadIdx.x;
    if (t < 32) {
        unsigned address = (unsigned)__cvta_generic_to_shared(&tile[(t % 8) * 4]);
        unsigned r = t | (t + 100) << 16;
        asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(address), "r"(r) : "memory");
    }
    if (sync) __syncthreads();
    if (t >= 32) out[t - 32] = tile[t - 32];
}
extern "C" __global__ void stmatrix_race(unsigned *out) { stmatrix_body(out, false); }
extern "C" __global__ void stmatrix_ok(unsigned *out) { stmatrix_body(out, true); }

// warp 0 copies 32 words global -> shared with cp.async and waits for them; warp 1 reads them
__device__ void cp_async_body(const int *in, int *out, bool sync)
{
    __shared__ __align__(16) int tile[32];
    int t = threadIdx.x;
    if (t < 32) {
        unsigned address = (unsigned)__cvta_generic_to_shared(&tile[t]);
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(address), "l"(in + t) : "memory");
        asm volatile("cp.async.wait_all;" ::: "memory");
    }
    if (sync) __syncthreads();
    if (t >= 32) out[t - 32] = tile[t - 32];
}
extern "C" __global__ void cp_async_race(const int *in, int *out) { cp_async_body(in, out, false); }
extern "C" __global__ void cp_async_ok(const int *in, int *out) { cp_async_body(in, out, true); }

// warp 0 loads a 16x16 f32 accumulator fragment from global and stores it to shared; warp 1 loads it from
// shared and stores it to global
__device__ void wmma_body(const float *in, float *out, bool sync)
{
    __shared__ __align__(32) float tile[256];
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    int t = threadIdx.x;
    if (t < 32) {
        wmma::load_matrix_sync(c, in, 16, wmma::mem_row_major);
        wmma::store_matrix_sync(tile, c, 16, wmma::mem_row_major);
    }
    if (sync) __syncthreads();
    if (t >= 32) {
        wmma::load_matrix_sync(c, tile, 16, wmma::mem_row_major);
        wmma::store_matrix_sync(out, c, 16, wmma::mem_row_major);
    }
}
extern "C" __global__ void wmma_race(const float *in, float *out) { wmma_body(in, out, false); }
extern "C" __global__ void wmma_ok(const float *in, float *out) { wmma_body(in, out, true); }

// every thread adds t + 1 to a shared counter; atomics of two warps do not race with each other
extern "C" __global__ void atomic_ok(int *out)
{
    __shared__ int count;
    int t = threadIdx.x;
    if (t == 0) count = 0;
    __syncthreads();
    atomicAdd(&count, t + 1);
    __syncthreads();
    if (t == 0) out[0] = count;
}

// warp 0 adds to the counter, warp 1 reads it with no barrier between: read-after-write
extern "C" __global__ void atomic_race_read(int *out)
{
    __shared__ int count;
    int t = threadIdx.x;
    if (t == 0) count = 0;
    __syncthreads();
    if (t < 32) atomicAdd(&count, t + 1);
    if (t >= 32) out[t - 32] = count;
}

// warp 0 adds to the counter, thread 32 stores to it with no barrier between: write-after-write
extern "C" __global__ void atomic_race_write(int *out)
{
    __shared__ int count;
    int t = threadIdx.x;
    if (t == 0) count = 0;
    __syncthreads();
    if (t < 32) atomicAdd(&count, t + 1);
    if (t == 32) count = 5;
    __syncthreads();
    if (t == 0) out[0] = count;
}
