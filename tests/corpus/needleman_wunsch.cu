// Needleman-Wunsch global alignment scores. The (n+1) x (n+1) score matrix is cut into 16 x 16 tiles;
// a launch processes the tiles of one tile anti-diagonal, each block a tile: the tile's similarity
// scores and its top/left borders go to shared memory, then 16 threads sweep the tile's cell
// anti-diagonals (31 wavefronts) and write it back. Written for gpusim's conformance corpus.
#define TS 16
extern "C" __global__ void nw_tiles(int *score, const int *similarity, int n, int penalty, int diagonal,
                                    int first_tile_row) {
    __shared__ int s[TS + 1][TS + 1];
    __shared__ int sim[TS][TS];
    int tx = threadIdx.x;
    int tile_row = first_tile_row + blockIdx.x, tile_col = diagonal - tile_row;
    int r0 = tile_row * TS, c0 = tile_col * TS;       // the tile's cells are score[r0+1..][c0+1..]
    int w = n + 1;
    for (int y = 0; y < TS; ++y) sim[y][tx] = similarity[(r0 + y) * n + c0 + tx];
    s[0][tx + 1] = score[r0 * w + c0 + tx + 1];
    s[tx + 1][0] = score[(r0 + tx + 1) * w + c0];
    if (tx == 0) s[0][0] = score[r0 * w + c0];
    __syncthreads();
    for (int wave = 0; wave < 2 * TS - 1; ++wave) {
        int y = wave - tx;
        if (y >= 0 && y < TS) {
            int x = tx;
            int best = s[y][x] + sim[y][x];
            best = max(best, s[y][x + 1] - penalty);
            best = max(best, s[y + 1][x] - penalty);
            s[y + 1][x + 1] = best;
        }
        __syncthreads();
    }
    for (int y = 0; y < TS; ++y) score[(r0 + y + 1) * w + c0 + tx + 1] = s[y + 1][tx + 1];
}

// The same tiles swept as two triangles (the upper-left one growing from the tile's corner, then the
// lower-right one), thread tx owning column tx + 1 of the upper wave and row TS - tx of the lower wave:
// the index arithmetic (m - tx + 1 rows, TS - m + tx columns) makes nvcc address the shared tile from
// negative offsets of its base, in 32-bit shared space.
extern "C" __global__ void nw_tiles_triangles(int *score, const int *similarity, int n, int penalty, int diagonal,
                                              int first_tile_row) {
    __shared__ int s[TS + 1][TS + 1];
    __shared__ int sim[TS][TS];
    int tx = threadIdx.x;
    int tile_row = first_tile_row + blockIdx.x, tile_col = diagonal - tile_row;
    int r0 = tile_row * TS, c0 = tile_col * TS;
    int w = n + 1;
    for (int y = 0; y < TS; ++y) sim[y][tx] = similarity[(r0 + y) * n + c0 + tx];
    s[0][tx + 1] = score[r0 * w + c0 + tx + 1];
    s[tx + 1][0] = score[(r0 + tx + 1) * w + c0];
    if (tx == 0) s[0][0] = score[r0 * w + c0];
    __syncthreads();
    for (int m = 0; m < TS; ++m) {
        if (tx <= m) {
            int x = tx + 1, y = m - tx + 1;
            s[y][x] = max(s[y - 1][x - 1] + sim[y - 1][x - 1], max(s[y][x - 1], s[y - 1][x]) - penalty);
        }
        __syncthreads();
    }
    for (int m = TS - 2; m >= 0; --m) {
        if (tx <= m) {
            int x = tx + TS - m, y = TS - tx;
            s[y][x] = max(s[y - 1][x - 1] + sim[y - 1][x - 1], max(s[y][x - 1], s[y - 1][x]) - penalty);
        }
        __syncthreads();
    }
    for (int y = 0; y < TS; ++y) score[(r0 + y + 1) * w + c0 + tx + 1] = s[y + 1][tx + 1];
}
