// Kernels on the less common types and operations that image, audio and physics codes use:
// 16-bit PCM samples scaled with round-to-nearest-even and saturation (ld/st .s16, cvt.rni), a periodic
// index with signed division and remainder of negative values, a weighted histogram with shared-memory
// float atomics and a global double atomicAdd, and a segmented scan with 16-lane shuffles (width 16).
// Written for gpusim's conformance corpus.
extern "C" __global__ void pcm_gain(const short *in, short *out, float gain, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = __float2int_rn(in[i] * gain);
    out[i] = (short)max(-32768, min(32767, v));
}

extern "C" __global__ void periodic_index(const int *offsets, int *wrapped, int *quotients, int period, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = offsets[i];
    wrapped[i] = ((k % period) + period) % period;
    quotients[i] = k / period;
}

extern "C" __global__ void weighted_histogram(const int *bins, const float *weights, float *hist,
                                              double *total, int n, int n_bins) {
    extern __shared__ float local_hist[];
    for (int b = threadIdx.x; b < n_bins; b += blockDim.x) local_hist[b] = 0.0f;
    __syncthreads();
    double sum = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&local_hist[bins[i]], weights[i]);
        sum += weights[i];
    }
    atomicAdd(total, sum);
    __syncthreads();
    for (int b = threadIdx.x; b < n_bins; b += blockDim.x) atomicAdd(&hist[b], local_hist[b]);
}

extern "C" __global__ void segmented_scan16(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    int lane16 = threadIdx.x % 16;
    for (int offset = 1; offset < 16; offset *= 2) {
        int t = __shfl_up_sync(0xffffffffu, v, offset, 16);
        if (lane16 >= offset) v += t;
    }
    if (i < n) out[i] = v;
}
