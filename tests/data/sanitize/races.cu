// Kernels for gpusim's sanitizer tests (tests/test_sanitizers.py): planted shared-memory races, their
// race-free versions, a 4-byte dynamic shared-memory overrun and a copy for initcheck. Launch with 64
// threads (two warps) unless a test says otherwise.

// RAW: warp 0 writes a slot, warp 1 reads it, no barrier between.
extern "C" __global__ void race_raw(int *out)
{
    __shared__ int slot[32];
    int t = threadIdx.x;
    if (t < 32) slot[t] = t + 1;
    if (t >= 32) out[t - 32] = slot[t - 32];
}

// WAR: after a barrier warp 0 reads the slots, then warp 1 overwrites them, no barrier between.
extern "C" __global__ void race_war(int *out)
{
    __shared__ int slot[32];
    int t = threadIdx.x;
    if (t < 32) slot[t] = t;
    __syncthreads();
    if (t < 32) out[t] = slot[t];
    if (t >= 32) slot[t - 32] = -t;
}

// WAW: both warps write the same slots, no barrier between.
extern "C" __global__ void race_waw(int *out)
{
    __shared__ int slot[32];
    int t = threadIdx.x;
    slot[t % 32] = t;
    __syncthreads();
    if (t < 32) out[t] = slot[t];
}

// WAW of the same value (two threads writing one halo cell with the same data): a warning, not an error.
extern "C" __global__ void same_value_waw(int *out)
{
    __shared__ int slot[32];
    int t = threadIdx.x;
    slot[t % 32] = 7 * (t % 32);
    __syncthreads();
    if (t < 32) out[t] = slot[t];
}

// The RAW pattern with a barrier: no hazard.
extern "C" __global__ void barrier_ok(int *out)
{
    __shared__ int slot[64];
    int t = threadIdx.x;
    slot[t] = t + 1;
    __syncthreads();
    out[t] = slot[63 - t];
}

// Warp-synchronous exchange inside each warp (__syncwarp between write and read): no hazard.
extern "C" __global__ void warp_sync_ok(int *out)
{
    __shared__ int slot[64];
    int t = threadIdx.x;
    slot[t] = t * 3;
    __syncwarp();
    out[t] = slot[(t & ~31) + ((t + 1) & 31)];
}

// The racy softmax (one row per block): every warp reads shared[0] (the row's max), then warp 0 overwrites
// shared[0] with its partial sum, with no barrier between the reads and that write.
extern "C" __global__ void softmax_racy(const float *in, float *out, int cols)
{
    __shared__ float shared[32];
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, warps = blockDim.x / 32;
    const float *x = in + blockIdx.x * cols;
    float maxval = -INFINITY;
    for (int i = tid; i < cols; i += blockDim.x) maxval = fmaxf(maxval, x[i]);
    for (int o = 16; o > 0; o /= 2) maxval = fmaxf(maxval, __shfl_down_sync(0xffffffff, maxval, o));
    if (lane == 0) shared[warp] = maxval;
    __syncthreads();
    if (tid == 0) {
        float m = shared[0];
        for (int i = 1; i < warps; i++) m = fmaxf(m, shared[i]);
        shared[0] = m;
    }
    __syncthreads();
    float offset = shared[0];
    float sumval = 0.0f;
    for (int i = tid; i < cols; i += blockDim.x) sumval += expf(x[i] - offset);
    for (int o = 16; o > 0; o /= 2) sumval += __shfl_down_sync(0xffffffff, sumval, o);
    if (lane == 0) shared[warp] = sumval;
    __syncthreads();
    if (tid == 0) {
        float s = 0.0f;
        for (int i = 0; i < warps; i++) s += shared[i];
        shared[0] = s;
    }
    __syncthreads();
    float sum = shared[0];
    for (int i = tid; i < cols; i += blockDim.x) out[blockIdx.x * cols + i] = expf(x[i] - offset) / sum;
}

// Thread 0 writes one float past the n floats of dynamic shared memory (launched with n * 4 bytes).
extern "C" __global__ void shared_overrun(const float *in, float *out, int n)
{
    extern __shared__ float buf[];
    int t = threadIdx.x;
    buf[t] = in[t];
    if (t == 0) buf[n] = -1.0f;
    __syncthreads();
    out[t] = buf[(t + 1) % n];
}

// A copy: with initcheck, reading gpu.empty memory is reported.
extern "C" __global__ void copy(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
