// 2D DCT-II of every 8 x 8 block of an image: one thread per coefficient, the block in shared memory,
// rows then columns against the orthonormal DCT matrix (passed in, C[u][x] = a(u) cos((2x+1) u pi / 16)).
// Written for gpusim's conformance corpus.
extern "C" __global__ void dct8x8(const float *src, float *dst, const float *C, int width) {
    __shared__ float block[8][8];
    __shared__ float rows[8][8];
    __shared__ float coef[8][8];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 8 + tx, y = blockIdx.y * 8 + ty;
    coef[ty][tx] = C[ty * 8 + tx];
    block[ty][tx] = src[y * width + x];
    __syncthreads();
    float s = 0.0f;                                // rows[ty][u = tx] = sum_x C[u][x] block[ty][x]
#pragma unroll
    for (int k = 0; k < 8; ++k) s += coef[tx][k] * block[ty][k];
    rows[ty][tx] = s;
    __syncthreads();
    s = 0.0f;                                      // out[v = ty][u = tx] = sum_y C[v][y] rows[y][u]
#pragma unroll
    for (int k = 0; k < 8; ++k) s += coef[ty][k] * rows[k][tx];
    dst[y * width + x] = s;
}
