// Gaussian elimination (forward phase) in two kernels per pivot t, as Rodinia's gaussian: fan1 computes
// the multipliers of column t, fan2 subtracts the scaled pivot row from every row below it (and from the
// right-hand side). The host does the back substitution. Written for gpusim's conformance corpus.
extern "C" __global__ void gauss_fan1(float *mult, const float *a, int n, int t) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n - 1 - t) return;
    int row = t + 1 + i;
    mult[row * n + t] = a[row * n + t] / a[t * n + t];
}

extern "C" __global__ void gauss_fan2(const float *mult, float *a, float *b, int n, int t) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n - 1 - t || col >= n - t) return;
    int row = t + 1 + i, c = t + col;
    float m = mult[row * n + t];
    a[row * n + c] -= m * a[t * n + c];
    if (col == 0) b[row] -= m * b[t];
}
