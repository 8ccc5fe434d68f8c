// Compiled with -lineinfo: .file/.loc directives, including the `inlined_at` form for inlined calls.
__device__ __forceinline__ float squared(float v)
{
    return v * v;
}

__device__ __forceinline__ float norm2(float a, float b)
{
    return squared(a) + squared(b);
}

__global__ void lengths(const float2* pts, float* len, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float2 p = pts[i];
        len[i] = sqrtf(norm2(p.x, p.y));
    }
}
