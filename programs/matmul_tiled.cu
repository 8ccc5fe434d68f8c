// matmul_tiled: C = A * B (row-major fp32, A is m x k, B is k x n) with 16x16 tiles of A
// and B staged in shared memory; each element loaded from global memory is reused 16
// times. Launch with 16x16 blocks on a 2D grid; any m, n, k (edges are zero-padded).
#define TILE 16

extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int m, int n, int k)
{
    __shared__ float tile_a[TILE][TILE];
    __shared__ float tile_b[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int base = 0; base < k; base += TILE) {
        tile_a[ty][tx] = (row < m && base + tx < k) ? A[row * k + base + tx] : 0.0f;
        tile_b[ty][tx] = (base + ty < k && col < n) ? B[(base + ty) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TILE; ++j) {
            sum += tile_a[ty][j] * tile_b[j][tx];
        }
        __syncthreads();
    }
    if (row < m && col < n) {
        C[row * n + col] = sum;
    }
}
