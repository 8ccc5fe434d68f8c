// Block-wide sum: shared-memory tree reduction, then warp shuffles for the last 32.
__global__ void reduce_sum(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float partial[256];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + tid;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    partial[tid] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        v = partial[tid] + partial[tid + 32];
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffff, v, off);
        if (tid == 0) out[blockIdx.x] = v;
    }
}
