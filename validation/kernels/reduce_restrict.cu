// Sum reductions in the form yencal's reduction post publishes them (https://yencal.github.io/gpu-parallel-reduction/),
// written here from its description: the input is a `const int* __restrict__` pointer and the grid-stride
// loop steps by `blockDim.x * gridDim.x` written in the loop itself. With both, nvcc (12.x and 13.x, -O3)
// keeps the loop rolled: one load in flight per thread and iteration (memory.cu's reduce_* kernels,
// without __restrict__, are unrolled four times). The int2 / int4 forms add the elements past the last
// whole vector once, after the loop.
//   reduce_nc_block_wW: warp shuffles, the warps' sums through shared memory, one atomicAdd per block
//   reduce_nc_warp_wW:  warp shuffles, one atomicAdd per warp

__device__ __forceinline__ int shuffle_sum(int v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

template <int W>
__device__ __forceinline__ int thread_sum(const int* __restrict__ in, int n)
{
    const int first = blockIdx.x * blockDim.x + threadIdx.x;
    int acc = 0;
    if (W == 1) {
        for (int i = first; i < n; i += blockDim.x * gridDim.x) acc += in[i];
    } else if (W == 2) {
        const int2* __restrict__ in2 = reinterpret_cast<const int2*>(in);
        for (int i = first; i < n / 2; i += blockDim.x * gridDim.x) {
            const int2 x = in2[i];
            acc += x.x + x.y;
        }
        const int tail = n / 2 * 2 + first;
        if (tail < n) acc += in[tail];
    } else {
        const int4* __restrict__ in4 = reinterpret_cast<const int4*>(in);
        for (int i = first; i < n / 4; i += blockDim.x * gridDim.x) {
            const int4 x = in4[i];
            acc += x.x + x.y + x.z + x.w;
        }
        const int tail = n / 4 * 4 + first;
        if (tail < n) acc += in[tail];
    }
    return acc;
}

template <int W>
__device__ __forceinline__ void block_atomic(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int warp_sums[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    int v = shuffle_sum(thread_sum<W>(in, n));
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? warp_sums[lane] : 0;
    if (warp == 0) v = shuffle_sum(v);
    if (threadIdx.x == 0) atomicAdd(out, v);
}

template <int W>
__device__ __forceinline__ void warp_atomic(const int* __restrict__ in, int* __restrict__ out, int n)
{
    const int v = shuffle_sum(thread_sum<W>(in, n));
    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

extern "C" __global__ void reduce_nc_block_w1(const int* __restrict__ in, int* __restrict__ out, int n) { block_atomic<1>(in, out, n); }
extern "C" __global__ void reduce_nc_block_w2(const int* __restrict__ in, int* __restrict__ out, int n) { block_atomic<2>(in, out, n); }
extern "C" __global__ void reduce_nc_block_w4(const int* __restrict__ in, int* __restrict__ out, int n) { block_atomic<4>(in, out, n); }
extern "C" __global__ void reduce_nc_warp_w1(const int* __restrict__ in, int* __restrict__ out, int n) { warp_atomic<1>(in, out, n); }
extern "C" __global__ void reduce_nc_warp_w2(const int* __restrict__ in, int* __restrict__ out, int n) { warp_atomic<2>(in, out, n); }
extern "C" __global__ void reduce_nc_warp_w4(const int* __restrict__ in, int* __restrict__ out, int n) { warp_atomic<4>(in, out, n); }
