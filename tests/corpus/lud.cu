// LU decomposition without pivoting (Doolittle: unit lower L, upper U, stored in place), of 32 x 32
// diagonal tiles of a matrix, one block per tile, the tile in shared memory (as Rodinia's lud_diagonal
// factors its diagonal block). Thread t owns column t of U and row t of L.
// Written for gpusim's conformance corpus.
#define LS 32
extern "C" __global__ void lud_tile(float *m, int n) {
    __shared__ float a[LS][LS];
    int t = threadIdx.x;
    int base = blockIdx.x * LS;
    for (int i = 0; i < LS; ++i) a[i][t] = m[(base + i) * n + base + t];
    __syncthreads();
    for (int k = 0; k < LS - 1; ++k) {
        if (t > k) a[t][k] /= a[k][k];                // multipliers: column k of L
        __syncthreads();
        if (t > k)                                     // trailing update of column t
            for (int i = k + 1; i < LS; ++i) a[i][t] -= a[i][k] * a[k][t];
        __syncthreads();
    }
    for (int i = 0; i < LS; ++i) m[(base + i) * n + base + t] = a[i][t];
}
