// reduce_shared: tree reduction in (dynamic) shared memory, one partial sum per block.
// Each thread loads one element; the tree halves the active threads each step with a
// __syncthreads() between steps. blockDim.x must be a power of two and the launch must
// pass blockDim.x * 4 bytes of dynamic shared memory.
extern "C" __global__ void reduce_shared(const float* in, float* partials, int n)
{
    extern __shared__ float scratch[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    scratch[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (tid < half) {
            scratch[tid] += scratch[tid + half];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partials[blockIdx.x] = scratch[0];
    }
}
