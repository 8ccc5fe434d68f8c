// Matrix transpose through a 32 x 32 shared-memory tile WITHOUT padding: the second phase reads a
// tile column, 32 lanes on the same bank, so every shared load is a 32-way bank conflict.
// programs/transpose_padded.cu is the same kernel with one float of padding per row.
#define TILE 32
#define ROWS_PER_PASS 8

extern "C" __global__ void transpose_shared(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS_PER_PASS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS_PER_PASS) {
        if (x < rows && y + j < cols) {
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
