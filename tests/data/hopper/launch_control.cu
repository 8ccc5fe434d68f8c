// setmaxnreg and griddepcontrol in a warp-specialised kernel: warpgroup 0 releases registers, warpgroup 1 takes
// them, both then scale their slice of x; the dependent-launch calls wait for / release the neighbouring grids.
extern "C" __global__ void __launch_bounds__(256, 1) scale(const float* x, float* y, float a, int n) {
    cudaGridDependencySynchronize();
    int wg = threadIdx.x / 128;
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + (float)wg;
    cudaTriggerProgrammaticLaunchCompletion();
}
