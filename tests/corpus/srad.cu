// Speckle-reducing anisotropic diffusion (SRAD), one iteration in two kernels: the four directional
// differences and the diffusion coefficient per pixel, then the divergence update. Neighbours clamp at
// the image border. Written for gpusim's conformance corpus.
extern "C" __global__ void srad_coefficients(const float *J, float *dN, float *dS, float *dW, float *dE,
                                             float *c, int rows, int cols, float q0sqr) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= cols || y >= rows) return;
    int k = y * cols + x;
    float jc = J[k];
    float n = J[max(y - 1, 0) * cols + x] - jc, s = J[min(y + 1, rows - 1) * cols + x] - jc;
    float w = J[y * cols + max(x - 1, 0)] - jc, e = J[y * cols + min(x + 1, cols - 1)] - jc;
    float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
    float l = (n + s + w + e) / jc;
    float num = 0.5f * g2 - 0.0625f * (l * l);
    float den = 1.0f + 0.25f * l;
    float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    float coef = 1.0f / (1.0f + den);
    dN[k] = n; dS[k] = s; dW[k] = w; dE[k] = e;
    c[k] = fminf(fmaxf(coef, 0.0f), 1.0f);
}

extern "C" __global__ void srad_update(float *J, const float *dN, const float *dS, const float *dW,
                                       const float *dE, const float *c, int rows, int cols, float lambda) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= cols || y >= rows) return;
    int k = y * cols + x;
    float cn = c[k], cs = c[min(y + 1, rows - 1) * cols + x], cw = c[k], ce = c[y * cols + min(x + 1, cols - 1)];
    float d = cn * dN[k] + cs * dS[k] + cw * dW[k] + ce * dE[k];
    J[k] = J[k] + 0.25f * lambda * d;
}
