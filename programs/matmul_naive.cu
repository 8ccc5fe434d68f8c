// matmul_naive: C = A * B (row-major fp32, A is m x k, B is k x n) with one thread per
// output element on a 2D grid. Every thread reads a whole row of A and column of B from
// global memory: no reuse beyond what the caches catch.
extern "C" __global__ void matmul_naive(const float* A, const float* B, float* C, int m, int n, int k)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float sum = 0.0f;
#pragma unroll 1
        for (int j = 0; j < k; ++j) {
            sum += A[row * k + j] * B[j * n + col];
        }
        C[row * n + col] = sum;
    }
}
