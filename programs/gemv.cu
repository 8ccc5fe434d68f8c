// gemv: y = A x for a row-major fp32 matrix A (rows x cols), one warp per row. The 32
// lanes stride across the row (coalesced), then fold their partial sums with
// __shfl_down_sync; lane 0 writes y[row].
extern "C" __global__ void gemv(const float* A, const float* x, float* y, int rows, int cols)
{
    int warps_per_block = blockDim.x / 32;
    int row = blockIdx.x * warps_per_block + threadIdx.x / 32;
    int lane = threadIdx.x & 31;
    if (row >= rows) {
        return;
    }
    float sum = 0.0f;
    for (int j = lane; j < cols; j += 32) {
        sum += A[(long long)row * cols + j] * x[j];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if (lane == 0) {
        y[row] = sum;
    }
}
