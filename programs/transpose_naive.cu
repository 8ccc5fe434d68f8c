// transpose_naive: out = in^T for a rows x cols fp32 matrix, 32x32 tiles, 32x8 threads
// per block (each thread copies 4 elements). Reads are coalesced, writes are strided by
// rows: each warp's store touches 32 different lines.
#define TILE 32
#define ROWS_PER_PASS 8

extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS_PER_PASS) {
        if (x < cols && y + j < rows) {
            out[x * rows + y + j] = in[(y + j) * cols + x];
        }
    }
}
