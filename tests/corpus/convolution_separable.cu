// Separable 2D convolution: a row pass and a column pass with a 9-tap filter (radius 4) held in
// __constant__ memory, each through a shared-memory tile with its halo (zero outside the image).
// Written for gpusim's conformance corpus.
#define RADIUS 4
#define ROW_W 32
#define ROW_H 4
#define COL_W 16
#define COL_H 16

__constant__ float c_filter[2 * RADIUS + 1] = {
    0.0625f, 0.125f, 0.25f, 0.5f, 1.0f, 0.5f, 0.25f, 0.125f, 0.0625f};

extern "C" __global__ void convolution_rows(float *dst, const float *src, int width, int height) {
    __shared__ float tile[ROW_H][ROW_W + 2 * RADIUS];
    int x = blockIdx.x * ROW_W + threadIdx.x;
    int y = blockIdx.y * ROW_H + threadIdx.y;
    int yc = min(y, height - 1);
    for (int t = threadIdx.x; t < ROW_W + 2 * RADIUS; t += ROW_W) {
        int gx = blockIdx.x * ROW_W + t - RADIUS;
        tile[threadIdx.y][t] = (gx >= 0 && gx < width) ? src[yc * width + gx] : 0.0f;
    }
    __syncthreads();
    if (x >= width || y >= height) return;
    float sum = 0.0f;
#pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k) sum += c_filter[RADIUS - k] * tile[threadIdx.y][threadIdx.x + RADIUS + k];
    dst[y * width + x] = sum;
}

extern "C" __global__ void convolution_columns(float *dst, const float *src, int width, int height) {
    __shared__ float tile[COL_H + 2 * RADIUS][COL_W];
    int x = blockIdx.x * COL_W + threadIdx.x;
    int y = blockIdx.y * COL_H + threadIdx.y;
    int xc = min(x, width - 1);
    for (int t = threadIdx.y; t < COL_H + 2 * RADIUS; t += COL_H) {
        int gy = blockIdx.y * COL_H + t - RADIUS;
        tile[t][threadIdx.x] = (gy >= 0 && gy < height) ? src[gy * width + xc] : 0.0f;
    }
    __syncthreads();
    if (x >= width || y >= height) return;
    float sum = 0.0f;
#pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k) sum += c_filter[RADIUS - k] * tile[threadIdx.y + RADIUS + k][threadIdx.x];
    dst[y * width + x] = sum;
}
