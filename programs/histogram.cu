// histogram: 256-bin byte histogram. Each block builds a private histogram in shared
// memory with shared atomics (cheap, contention only inside the block), then adds its
// non-zero bins to the global histogram with one global atomicAdd per bin.
#define BINS 256

extern "C" __global__ void histogram(const unsigned char* data, unsigned int* counts, int n)
{
    __shared__ unsigned int local_counts[BINS];
    for (int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        local_counts[bin] = 0;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&local_counts[data[i]], 1u);
    }
    __syncthreads();
    for (int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        unsigned int count = local_counts[bin];
        if (count != 0) {
            atomicAdd(&counts[bin], count);
        }
    }
}
