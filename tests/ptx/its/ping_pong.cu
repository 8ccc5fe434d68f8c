// Producer/consumer inside one warp: lane 0 and lane 31 of every warp hand a value to each other through
// flags in global memory. Under IPDOM whichever side runs first spins forever; under independent thread
// scheduling both progress.
extern "C" __global__ void ping_pong(volatile int *flags, volatile int *data, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int warp = i / 32;
    int lane = threadIdx.x % 32;
    if (lane == 0) {
        data[2 * warp] = 100 + warp;          // ping
        __threadfence();
        flags[2 * warp] = 1;
        while (flags[2 * warp + 1] == 0) {
        }
        out[warp] = data[2 * warp + 1];       // the pong lane 31 sent back
    } else if (lane == 31) {
        while (flags[2 * warp] == 0) {
        }
        data[2 * warp + 1] = 2 * data[2 * warp];
        __threadfence();
        flags[2 * warp + 1] = 1;
    }
}
