// Double-precision and 64-bit integer arithmetic, with fast-math-free division and sqrt.
__global__ void dmath(const double* x, double* y, long long* z, unsigned long long seed, int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = x[i];
    double b = a * 3.5 + 1.0e-3;
    b = b / (a + 2.0);
    b = sqrt(fabs(b)) + fma(a, b, -0.25);
    y[i] = b;
    unsigned long long h = seed ^ (unsigned long long)i;
    h *= 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    long long q = (long long)h / 7 - (long long)h % 13;
    z[i] = q + __double2ll_rn(b) + (__mul64hi((long long)h, q) << 3);
}
