// gemm_batched: C[b] = A[b] * B[b] for a batch of row-major fp32 matrices (A[b] is m x k,
// B[b] is k x n), one thread per output element, blockIdx.z selects the batch entry.
extern "C" __global__ void gemm_batched(const float* A, const float* B, float* C, int m, int n, int k)
{
    int batch = blockIdx.z;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        const float* a = A + (long long)batch * m * k;
        const float* b = B + (long long)batch * k * n;
        float sum = 0.0f;
#pragma unroll 1
        for (int j = 0; j < k; ++j) {
            sum += a[row * k + j] * b[j * n + col];
        }
        C[(long long)batch * m * n + row * n + col] = sum;
    }
}
