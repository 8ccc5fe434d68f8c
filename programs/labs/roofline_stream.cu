// Roofline probe with memory/compute overlap inside each warp: a grid-stride loop that issues the load of
// its next float4 before computing the current one (software pipelining), so that a warp's loads are in
// flight while it computes. Per element: 32 bytes of DRAM traffic (one float4 in, one out) and
// 16 * iterations + 16 FLOPs (8 independent FMA chains per round, unrolled 16 times so that FMAs dominate the issued instructions).
extern "C" __global__ void roofline_stream(const float4* in, float4* out, int n4, int iterations)
{
    int stride = gridDim.x * blockDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) {
        return;
    }
    float4 next = in[i];
    for (; i < n4; i += stride) {
        float4 x = next;
        if (i + stride < n4) {
            next = in[i + stride];
        }
        float a0 = x.x, a1 = x.y, a2 = x.z, a3 = x.w;
        float b0 = x.x, b1 = x.y, b2 = x.z, b3 = x.w;
#pragma unroll 16
        for (int round = 0; round < iterations; ++round) {
            a0 = a0 * 0.5f + x.x; a1 = a1 * 0.5f + x.y; a2 = a2 * 0.5f + x.z; a3 = a3 * 0.5f + x.w;
            b0 = b0 * 0.25f + x.x; b1 = b1 * 0.25f + x.y; b2 = b2 * 0.25f + x.z; b3 = b3 * 0.25f + x.w;
        }
        out[i] = make_float4(a0 + b0, a1 + b1, a2 + b2, a3 + b3);
    }
}
