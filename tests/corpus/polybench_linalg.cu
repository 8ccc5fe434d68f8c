// PolyBench linear-algebra kernels, one thread per output element as PolyBench/GPU maps them:
// 2mm, 3mm, atax, bicg, gemver, gesummv, mvt, syrk, syr2k, covariance, correlation. Row-major float
// arrays; sizes are arguments. Written for gpusim's conformance corpus from the kernels' definitions.

// 2mm: tmp = alpha * A * B (ni x nk times nk x nj); D = beta * D + tmp * C (nj x nl).
extern "C" __global__ void mm2_tmp(const float *A, const float *B, float *tmp, int ni, int nj, int nk, float alpha) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= ni || j >= nj) return;
    float s = 0.0f;
    for (int k = 0; k < nk; ++k) s += alpha * A[i * nk + k] * B[k * nj + j];
    tmp[i * nj + j] = s;
}
extern "C" __global__ void mm2_out(const float *tmp, const float *C, float *D, int ni, int nl, int nj, float beta) {
    int l = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= ni || l >= nl) return;
    float s = D[i * nl + l] * beta;
    for (int j = 0; j < nj; ++j) s += tmp[i * nj + j] * C[j * nl + l];
    D[i * nl + l] = s;
}

// 3mm: E = A B, F = C D, G = E F, three launches of one product kernel (n x m times m x p).
extern "C" __global__ void mm3_product(const float *X, const float *Y, float *Z, int n, int m, int p) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= p) return;
    float s = 0.0f;
    for (int k = 0; k < m; ++k) s += X[i * m + k] * Y[k * p + j];
    Z[i * p + j] = s;
}

// atax: tmp = A x, y = A^T tmp (A is nx x ny).
extern "C" __global__ void atax_ax(const float *A, const float *x, float *tmp, int nx, int ny) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nx) return;
    float s = 0.0f;
    for (int j = 0; j < ny; ++j) s += A[i * ny + j] * x[j];
    tmp[i] = s;
}
extern "C" __global__ void atax_aty(const float *A, const float *tmp, float *y, int nx, int ny) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= ny) return;
    float s = 0.0f;
    for (int i = 0; i < nx; ++i) s += A[i * ny + j] * tmp[i];
    y[j] = s;
}

// bicg: s = A^T r, q = A p (A is nx x ny).
extern "C" __global__ void bicg_s(const float *A, const float *r, float *s, int nx, int ny) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= ny) return;
    float acc = 0.0f;
    for (int i = 0; i < nx; ++i) acc += r[i] * A[i * ny + j];
    s[j] = acc;
}
extern "C" __global__ void bicg_q(const float *A, const float *p, float *q, int nx, int ny) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nx) return;
    float acc = 0.0f;
    for (int j = 0; j < ny; ++j) acc += A[i * ny + j] * p[j];
    q[i] = acc;
}

// gemver: A += u1 v1^T + u2 v2^T; x = x + beta A^T y + z; w = alpha A x.
extern "C" __global__ void gemver_rank2(float *A, const float *u1, const float *v1, const float *u2,
                                        const float *v2, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;
    A[i * n + j] += u1[i] * v1[j] + u2[i] * v2[j];
}
extern "C" __global__ void gemver_x(const float *A, float *x, const float *y, const float *z, int n, float beta) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = x[i];
    for (int j = 0; j < n; ++j) s += beta * A[j * n + i] * y[j];
    x[i] = s + z[i];
}
extern "C" __global__ void gemver_w(const float *A, const float *x, float *w, int n, float alpha) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = w[i];
    for (int j = 0; j < n; ++j) s += alpha * A[i * n + j] * x[j];
    w[i] = s;
}

// gesummv: y = alpha A x + beta B x.
extern "C" __global__ void gesummv(const float *A, const float *B, const float *x, float *y, int n,
                                   float alpha, float beta) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float ta = 0.0f, tb = 0.0f;
    for (int j = 0; j < n; ++j) { ta += A[i * n + j] * x[j]; tb += B[i * n + j] * x[j]; }
    y[i] = alpha * ta + beta * tb;
}

// mvt: x1 += A y1, x2 += A^T y2.
extern "C" __global__ void mvt_x1(const float *A, float *x1, const float *y1, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = x1[i];
    for (int j = 0; j < n; ++j) s += A[i * n + j] * y1[j];
    x1[i] = s;
}
extern "C" __global__ void mvt_x2(const float *A, float *x2, const float *y2, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = x2[i];
    for (int j = 0; j < n; ++j) s += A[j * n + i] * y2[j];
    x2[i] = s;
}

// syrk: C = alpha A A^T + beta C (A is n x m).
extern "C" __global__ void syrk(const float *A, float *C, int n, int m, float alpha, float beta) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;
    float s = C[i * n + j] * beta;
    for (int k = 0; k < m; ++k) s += alpha * A[i * m + k] * A[j * m + k];
    C[i * n + j] = s;
}

// syr2k: C = alpha (A B^T + B A^T) + beta C (A, B are n x m).
extern "C" __global__ void syr2k(const float *A, const float *B, float *C, int n, int m, float alpha, float beta) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;
    float s = C[i * n + j] * beta;
    for (int k = 0; k < m; ++k) s += alpha * A[i * m + k] * B[j * m + k] + alpha * B[i * m + k] * A[j * m + k];
    C[i * n + j] = s;
}

// covariance of m variables (columns) over n observations (rows): column means, centring, then the
// upper triangle of the m x m covariance mirrored (one thread per row j1 of it).
extern "C" __global__ void covar_mean(const float *data, float *mean, int n, int m) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m) return;
    float s = 0.0f;
    for (int i = 0; i < n; ++i) s += data[i * m + j];
    mean[j] = s / (float)n;
}
extern "C" __global__ void covar_center(float *data, const float *mean, int n, int m) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= m) return;
    data[i * m + j] -= mean[j];
}
extern "C" __global__ void covar_matrix(const float *data, float *cov, int n, int m) {
    int j1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (j1 >= m) return;
    for (int j2 = j1; j2 < m; ++j2) {
        float s = 0.0f;
        for (int i = 0; i < n; ++i) s += data[i * m + j1] * data[i * m + j2];
        s /= (float)(n - 1);
        cov[j1 * m + j2] = s;
        cov[j2 * m + j1] = s;
    }
}

// correlation: means, standard deviations (a tiny one replaced by 1), standardization by
// sqrt(n) * std, then the correlation matrix (unit diagonal).
extern "C" __global__ void corr_std(const float *data, const float *mean, float *stddev, int n, int m, float eps) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m) return;
    float s = 0.0f;
    for (int i = 0; i < n; ++i) { float d = data[i * m + j] - mean[j]; s += d * d; }
    s = sqrtf(s / (float)n);
    stddev[j] = s <= eps ? 1.0f : s;
}
extern "C" __global__ void corr_standardize(float *data, const float *mean, const float *stddev, int n, int m) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= m) return;
    data[i * m + j] = (data[i * m + j] - mean[j]) / (sqrtf((float)n) * stddev[j]);
}
extern "C" __global__ void corr_matrix(const float *data, float *corr, int n, int m) {
    int j1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (j1 >= m) return;
    corr[j1 * m + j1] = 1.0f;
    for (int j2 = j1 + 1; j2 < m; ++j2) {
        float s = 0.0f;
        for (int i = 0; i < n; ++i) s += data[i * m + j1] * data[i * m + j2];
        corr[j1 * m + j2] = s;
        corr[j2 * m + j1] = s;
    }
}
