// Texture fetches as nvcc compiles them for texture objects (tests/test_textures.py checks each against
// a numpy reimplementation of the CUDA Programming Guide's texture-fetching formulas).
#include <cuda_runtime.h>

extern "C" __global__ void fetch1d(cudaTextureObject_t t, const float* x, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float4>(t, x[i]);
}
extern "C" __global__ void fetch2d(cudaTextureObject_t t, const float* x, const float* y, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(t, x[i], y[i]);
}
extern "C" __global__ void fetch3d(cudaTextureObject_t t, const float* x, const float* y, const float* z,
                                   float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float4>(t, x[i], y[i], z[i]);
}
extern "C" __global__ void fetch2d_int(cudaTextureObject_t t, const float* x, const float* y, int4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<int4>(t, x[i], y[i]);
}
extern "C" __global__ void fetch2d_uint(cudaTextureObject_t t, const float* x, const float* y, uint4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<uint4>(t, x[i], y[i]);
}
extern "C" __global__ void fetch_index(cudaTextureObject_t t, const int* index, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float4>(t, index[i]);
}
extern "C" __global__ void fetch_index_int(cudaTextureObject_t t, const int* index, int4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<int4>(t, index[i]);
}
// tex2Dgather: the four texels of the bilinear footprint, one component each call
extern "C" __global__ void gather(cudaTextureObject_t t, const float* x, const float* y, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[4 * i + 0] = tex2Dgather<float4>(t, x[i], y[i], 0);
        out[4 * i + 1] = tex2Dgather<float4>(t, x[i], y[i], 1);
        out[4 * i + 2] = tex2Dgather<float4>(t, x[i], y[i], 2);
        out[4 * i + 3] = tex2Dgather<float4>(t, x[i], y[i], 3);
    }
}
extern "C" __global__ void gather_int(cudaTextureObject_t t, const float* x, const float* y, int4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2Dgather<int4>(t, x[i], y[i], 0);
}
// a texture-based image kernel: 3x3 box filter, one thread per pixel, the texture clamps at the edges
extern "C" __global__ void box3(cudaTextureObject_t t, float* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            sum += tex2D<float>(t, x + dx + 0.5f, y + dy + 0.5f);
    out[y * width + x] = sum / 9.0f;
}
