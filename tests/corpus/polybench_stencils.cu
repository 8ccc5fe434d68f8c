// PolyBench stencils, one thread per point, one launch per half time step as PolyBench/GPU does:
// jacobi-1d, jacobi-2d, fdtd-2d (ey, ex, hz updates with the _fict_ source row) and heat-3d.
// Written for gpusim's conformance corpus from the kernels' definitions.
extern "C" __global__ void jacobi1d(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 1 || i >= n - 1) return;
    out[i] = 0.33333f * (in[i - 1] + in[i] + in[i + 1]);
}

extern "C" __global__ void jacobi2d(const float *in, float *out, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < 1 || i >= n - 1 || j < 1 || j >= n - 1) return;
    out[i * n + j] = 0.2f * (in[i * n + j] + in[i * n + j - 1] + in[i * n + j + 1] + in[(i + 1) * n + j] +
                             in[(i - 1) * n + j]);
}

extern "C" __global__ void fdtd_ey(float *ey, const float *hz, const float *fict, int nx, int ny, int t) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;
    if (i == 0) ey[j] = fict[t];
    else ey[i * ny + j] -= 0.5f * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
}
extern "C" __global__ void fdtd_ex(float *ex, const float *hz, int nx, int ny) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j < 1 || j >= ny) return;
    ex[i * ny + j] -= 0.5f * (hz[i * ny + j] - hz[i * ny + j - 1]);
}
extern "C" __global__ void fdtd_hz(float *hz, const float *ex, const float *ey, int nx, int ny) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx - 1 || j >= ny - 1) return;
    hz[i * ny + j] -= 0.7f * (ex[i * ny + j + 1] - ex[i * ny + j] + ey[(i + 1) * ny + j] - ey[i * ny + j]);
}

extern "C" __global__ void heat3d(const float *in, float *out, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
    int i = blockIdx.z * blockDim.z + threadIdx.z;
    if (i < 1 || i >= n - 1 || j < 1 || j >= n - 1 || k < 1 || k >= n - 1) return;
    int c = (i * n + j) * n + k, p = n * n;
    float v = in[c];
    out[c] = 0.125f * (in[c + p] - 2.0f * v + in[c - p]) + 0.125f * (in[c + n] - 2.0f * v + in[c - n]) +
             0.125f * (in[c + 1] - 2.0f * v + in[c - 1]) + v;
}
