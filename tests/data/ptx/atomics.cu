// Atomics on global and shared memory: add (int, float, double), CAS loop, min/max, exch, inc.
__device__ double atomic_max_double(double* addr, double val)
{
    unsigned long long* p = (unsigned long long*)addr;
    unsigned long long old = *p, assumed;
    do {
        assumed = old;
        if (__longlong_as_double(assumed) >= val) break;
        old = atomicCAS(p, assumed, __double_as_longlong(val));
    } while (assumed != old);
    return __longlong_as_double(old);
}

__global__ void histogram(const unsigned char* data, int n, unsigned* bins, float* fsum,
                          double* dmax, int* imin, unsigned* counter)
{
    __shared__ unsigned local_bins[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) local_bins[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&local_bins[data[i]], 1u);
        atomicAdd(fsum, (float)data[i] * 0.5f);
        atomicMin(imin, -(int)data[i]);
        atomic_max_double(dmax, (double)data[i] * 1.25);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&bins[i], local_bins[i]);
    if (threadIdx.x == 0) {
        atomicInc(counter, 1000u);
        atomicExch(counter + 1, blockIdx.x);
    }
}
