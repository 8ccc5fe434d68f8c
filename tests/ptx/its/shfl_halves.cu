// Shuffles in both paths of a branch, each naming only its own half of the warp: CUDA's answer is each
// half reversed within itself.
extern "C" __global__ void shfl_halves(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = in[i];
    int r;
    if (lane < 16) {
        r = __shfl_sync(0x0000ffffu, v * 2, 15 - lane);
    } else {
        r = __shfl_sync(0xffff0000u, v * 3, 47 - lane);
    }
    out[i] = r;
}
