// Kernels of the `overhead` lab: one small elementwise step, chained N times, and the same N steps fused.
// step:  out[i] = in[i] * scale + bias                       (one HBM read + one write per element)
// fused: out[i] = in[i], then `steps` times x = x * scale + bias (one read + one write for all N steps)
// Build: nvcc -ptx -O3 -arch=sm_80 -lineinfo chain.cu -o chain.ptx

extern "C" __global__ void step(float* out, const float* in, float scale, float bias, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * scale + bias;
    }
}

extern "C" __global__ void fused(float* out, const float* in, float scale, float bias, int steps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        for (int s = 0; s < steps; ++s) {
            x = x * scale + bias;
        }
        out[i] = x;
    }
}
