// __syncwarp with partial masks (each half of a warp syncs itself) and across a branch (the two halves'
// __syncwarp() calls synchronize with each other under independent thread scheduling).
extern "C" __global__ void syncwarp_halves(const int *in, int *out)
{
    __shared__ int buf[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int base = threadIdx.x & ~31;
    int lane = threadIdx.x & 31;
    int v = in[i];
    if (lane < 16) {
        buf[base + lane] = 2 * v;
        __syncwarp(0x0000ffff);
        out[i] = buf[base + 15 - lane];
    } else {
        buf[base + lane] = 3 * v;
        __syncwarp(0xffff0000);
        out[i] = buf[base + 47 - lane];
    }
}

extern "C" __global__ void syncwarp_cross(const int *in, int *out)
{
    __shared__ int buf[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int base = threadIdx.x & ~31;
    int lane = threadIdx.x & 31;
    if (lane >= 16) {
        __syncwarp();                          // waits for the lower half's __syncwarp
        out[i] = buf[base + lane - 16] + 1;
    } else {
        buf[base + lane] = in[i];
        __syncwarp();
        out[i] = 0;
    }
}
