// Prefix sums with warp shuffles: an inclusive scan per warp (Kogge-Stone over shfl.up), a block scan
// built from warp scans (warp totals scanned by the first warp), and the pass that adds each block's
// offset so that three launches make a device-wide scan. Written for gpusim's conformance corpus.
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float warp_inclusive_f(float v) {
    unsigned lane = threadIdx.x % 32;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        float t = __shfl_up_sync(FULL_MASK, v, offset);
        if (lane >= offset) v += t;
    }
    return v;
}

__device__ __forceinline__ int warp_inclusive_i(int v) {
    unsigned lane = threadIdx.x % 32;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        int t = __shfl_up_sync(FULL_MASK, v, offset);
        if (lane >= offset) v += t;
    }
    return v;
}

// Each warp scans its own 32 consecutive elements (n a multiple of 32).
extern "C" __global__ void warp_scan(const float *in, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    v = warp_inclusive_f(v);
    if (i < n) out[i] = v;
}

// Inclusive scan of each block's elements; the block's total goes to block_sums[blockIdx.x].
extern "C" __global__ void block_scan(const int *in, int *out, int *block_sums, unsigned n) {
    __shared__ int warp_totals[32];
    unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    unsigned i = blockIdx.x * blockDim.x + tid;
    int v = i < n ? in[i] : 0;
    v = warp_inclusive_i(v);
    if (lane == 31) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        unsigned warps = blockDim.x / 32;
        int t = lane < warps ? warp_totals[lane] : 0;
        t = warp_inclusive_i(t);
        warp_totals[lane] = t;
    }
    __syncthreads();
    if (warp > 0) v += warp_totals[warp - 1];
    if (i < n) out[i] = v;
    if (block_sums != 0 && tid == blockDim.x - 1) block_sums[blockIdx.x] = v;
}

// Adds the inclusive scan of the block totals of all earlier blocks.
extern "C" __global__ void add_block_offsets(int *data, const int *scanned_sums, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0 && i < n) data[i] += scanned_sums[blockIdx.x - 1];
}
