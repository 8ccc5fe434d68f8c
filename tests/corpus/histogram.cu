// 256-bin byte histogram with per-block shared-memory atomics, reading the data four bytes at a time
// through uchar4 (ld.global.v4.u8), then merging the block histograms with global atomics.
// Written for gpusim's conformance corpus.
extern "C" __global__ void histogram256(const uchar4 *data, unsigned n_words, unsigned *hist) {
    __shared__ unsigned bins[256];
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) bins[b] = 0;
    __syncthreads();
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n_words; i += blockDim.x * gridDim.x) {
        uchar4 w = data[i];
        atomicAdd(&bins[w.x], 1u);
        atomicAdd(&bins[w.y], 1u);
        atomicAdd(&bins[w.z], 1u);
        atomicAdd(&bins[w.w], 1u);
    }
    __syncthreads();
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x)
        if (bins[b]) atomicAdd(&hist[b], bins[b]);
}

// Histogram with warp aggregation by value: __match_any_sync groups the lanes holding the same bin, the
// group's lowest lane adds the group's size (popc of the match mask) with one shared atomic.
extern "C" __global__ void histogram_match_any(const unsigned char *data, unsigned n, unsigned *hist) {
    __shared__ unsigned bins[256];
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) bins[b] = 0;
    __syncthreads();
    unsigned lane = threadIdx.x % 32;
    for (unsigned base = blockIdx.x * blockDim.x; base < n; base += blockDim.x * gridDim.x) {
        unsigned i = base + threadIdx.x;
        unsigned active = __ballot_sync(0xffffffffu, i < n);
        if (i < n) {
            unsigned bin = data[i];
            unsigned same = __match_any_sync(active, bin);
            if (lane == __ffs(same) - 1) atomicAdd(&bins[bin], __popc(same));
        }
    }
    __syncthreads();
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x)
        if (bins[b]) atomicAdd(&hist[b], bins[b]);
}
