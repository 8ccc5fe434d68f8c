// A plain FMA-intensity kernel, written the straightforward way: one load, `rounds` x 16 FMAs in 4
// independent chains (each chain's FMAs written next to each other), one store: 8 DRAM bytes and
// 32 x rounds FLOPs per thread. nvcc keeps each chain's FMAs adjacent in the PTX and moves the constants
// with mov; ptxas interleaves the chains and folds the constants (lab `compiler`, docs/codegen.md).
extern "C" __global__ void fma_plain(const float* in, float* out, int n, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float x = in[i];
    float a = x, b = x + 1.0f, c = x + 2.0f, d = x + 3.0f;
    for (int r = 0; r < rounds; ++r) {
        a = a * 0.999f + 0.5f; a = a * 0.999f + 0.5f; a = a * 0.999f + 0.5f; a = a * 0.999f + 0.5f;
        b = b * 0.998f + 0.25f; b = b * 0.998f + 0.25f; b = b * 0.998f + 0.25f; b = b * 0.998f + 0.25f;
        c = c * 0.997f + 0.125f; c = c * 0.997f + 0.125f; c = c * 0.997f + 0.125f; c = c * 0.997f + 0.125f;
        d = d * 0.996f + 0.0625f; d = d * 0.996f + 0.0625f; d = d * 0.996f + 0.0625f; d = d * 0.996f + 0.0625f;
    }
    out[i] = a + b + c + d;
}
