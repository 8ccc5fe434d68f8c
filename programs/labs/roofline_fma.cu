// Roofline probe: each thread loads one float4 (16 B), applies `iterations` rounds of 8 independent FMA
// chains (16 FLOPs per round, two chains per component), and stores one float4 (16 B): 32 bytes of
// DRAM traffic and 16 * iterations + 16 FLOPs per thread. A float4 per thread keeps 16 B per thread in
// flight (Little's law needs more bytes in flight than one float per thread gives). The round loop is
// unrolled 4 times so that FMAs are ~90 % of the issued instructions.
extern "C" __global__ void roofline_fma(const float4* in, float4* out, int n4, int iterations)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) {
        return;
    }
    float4 x = in[i];
    float a0 = x.x, a1 = x.y, a2 = x.z, a3 = x.w;
    float b0 = x.x, b1 = x.y, b2 = x.z, b3 = x.w;
#pragma unroll 4
    for (int round = 0; round < iterations; ++round) {
        a0 = a0 * 0.5f + x.x; a1 = a1 * 0.5f + x.y; a2 = a2 * 0.5f + x.z; a3 = a3 * 0.5f + x.w;
        b0 = b0 * 0.25f + x.x; b1 = b1 * 0.25f + x.y; b2 = b2 * 0.25f + x.z; b3 = b3 * 0.25f + x.w;
    }
    out[i] = make_float4(a0 + b0, a1 + b1, a2 + b2, a3 + b3);
}
