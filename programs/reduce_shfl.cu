// reduce_shfl: sum of n floats with warp shuffles. A grid-stride loop accumulates per
// thread, __shfl_down_sync folds the 32 lanes of each warp in five steps (no shared
// memory, no barriers), and lane 0 of every warp does one atomicAdd into total[0].
extern "C" __global__ void reduce_shfl(const float* in, float* total, int n)
{
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        sum += in[i];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(total, sum);
    }
}
