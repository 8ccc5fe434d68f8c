// Pathfinder: the cheapest path from the top row to each bottom cell moving down, down-left or
// down-right. Each launch advances `height` rows; a block keeps a row of BS cells in shared memory and
// computes a pyramid (the halo shrinks one cell per row), writing BS - 2 * height cells.
// Written for gpusim's conformance corpus.
#define BS 64
extern "C" __global__ void pathfinder(const int *wall, const int *src, int *dst, int cols, int start_row,
                                      int height) {
    __shared__ int prev[BS];
    __shared__ int result[BS];
    int tx = threadIdx.x;
    int small_cols = BS - 2 * height;
    int x = small_cols * blockIdx.x - height + tx;
    bool inside = x >= 0 && x < cols;
    if (inside) prev[tx] = src[x];
    __syncthreads();
    bool computed = false;
    for (int i = 0; i < height; ++i) {
        computed = false;
        if (tx >= i + 1 && tx <= BS - i - 2 && inside) {
            int up = prev[tx];
            int left = x > 0 ? prev[tx - 1] : up;
            int right = x < cols - 1 ? prev[tx + 1] : up;
            result[tx] = min(up, min(left, right)) + wall[(start_row + i + 1) * cols + x];
            computed = true;
        }
        __syncthreads();
        if (computed) prev[tx] = result[tx];
        __syncthreads();
    }
    if (computed && tx >= height && tx < BS - height) dst[x] = result[tx];
}
