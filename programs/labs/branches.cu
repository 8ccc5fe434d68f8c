// Branch divergence: every thread runs `work` dependent FMA rounds on one of two paths. `mode` picks the
// condition: 0 uniform (every thread takes path A), 1 intra-warp (odd lanes take path B: each warp runs
// both paths one after the other), 2 inter-warp (odd warps take path B: each warp runs one path).
extern "C" __global__ void branches(float* out, int mode, int work)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool take_b = (mode == 1) ? (threadIdx.x & 1) : (mode == 2) ? ((threadIdx.x >> 5) & 1) : false;
    float value = (float)threadIdx.x;
    if (take_b) {
#pragma unroll 1
        for (int round = 0; round < work; ++round) {
            value = value * 0.75f + 2.0f;
        }
    } else {
#pragma unroll 1
        for (int round = 0; round < work; ++round) {
            value = value * 0.5f + 1.0f;
        }
    }
    out[i] = value;
}
