// Black-Scholes prices of European calls and puts. The cumulative normal distribution is the
// Abramowitz-Stegun 26.2.17 polynomial (|error| < 7.5e-8). Written for gpusim's conformance corpus.
// The same in float and in double (a template: the double form goes through the double-precision
// exp / log / sqrt / division sequences of the CUDA math library).
template <typename T>
__device__ T cnd(T d) {
    const T a1 = T(0.31938153), a2 = T(-0.356563782), a3 = T(1.781477937), a4 = T(-1.821255978),
            a5 = T(1.330274429), rsqrt2pi = T(0.39894228040143267794);
    T k = T(1) / (T(1) + T(0.2316419) * fabs(d));
    T c = rsqrt2pi * exp(T(-0.5) * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0 ? T(1) - c : c;
}

template <typename T>
__device__ void black_scholes_body(T *call, T *put, const T *S, const T *X, const T *Tm, T r, T v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T s = S[i], x = X[i], t = Tm[i];
    T sqrt_t = sqrt(t);
    T d1 = (log(s / x) + (r + T(0.5) * v * v) * t) / (v * sqrt_t);
    T d2 = d1 - v * sqrt_t;
    T nd1 = cnd(d1), nd2 = cnd(d2);
    T discount = exp(-r * t);
    call[i] = s * nd1 - x * discount * nd2;
    put[i] = x * discount * (T(1) - nd2) - s * (T(1) - nd1);
}

extern "C" __global__ void black_scholes(float *call, float *put, const float *S, const float *X,
                                         const float *T, float r, float v, int n) {
    black_scholes_body<float>(call, put, S, X, T, r, v, n);
}

extern "C" __global__ void black_scholes_double(double *call, double *put, const double *S, const double *X,
                                                const double *T, double r, double v, int n) {
    black_scholes_body<double>(call, put, S, X, T, r, v, n);
}
