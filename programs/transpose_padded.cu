// transpose_padded: out = in^T for a rows x cols fp32 matrix through a shared-memory tile.
// Both the global read and the global write are coalesced; the tile is 32x33 so that
// reading a column of it hits 32 different banks (a 32x32 tile would be a 32-way bank
// conflict). Launch with 32x8 blocks on a 2D grid of 32x32 tiles.
#define TILE 32
#define ROWS_PER_PASS 8

extern "C" __global__ void transpose_padded(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
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
