// Device functions nvcc does not inline: gpusim runs them with call/ret (tests/test_calls.py).
struct Pair { int lo; int hi; };
struct Big { float v[4]; };

__device__ __noinline__ unsigned factorial(unsigned n) { return n <= 1 ? 1u : n * factorial(n - 1); }

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ __noinline__ Pair minmax(int a, int b) { Pair p; p.lo = a < b ? a : b; p.hi = a < b ? b : a; return p; }

__device__ __noinline__ Big scale4(Big x, float s) {
    Big r;
    for (int i = 0; i < 4; ++i) r.v[i] = x.v[i] * s;
    return r;
}

__device__ __noinline__ double mix(char c, short h, long long q, double d) { return c + h + (double)q * d; }

// a tree walk: node i has children 2i+1 and 2i+2 below n; sums the values of the subtree at i
__device__ __noinline__ int subtree_sum(const int *values, int n, int i) {
    if (i >= n) return 0;
    return values[i] + subtree_sum(values, n, 2 * i + 1) + subtree_sum(values, n, 2 * i + 2);
}

// a local array whose address escapes to a callee: each activation needs its own frame in local memory
__device__ __noinline__ int sum_local(const int *p, int k) {
    int s = 0;
    for (int i = 0; i < k; ++i) s += p[i];
    return s;
}

__device__ __noinline__ int fill_and_sum(int base, int k) {
    int tmp[8];
    for (int i = 0; i < 8; ++i) tmp[i] = base + i;
    volatile int *vp = tmp;
    vp[0] = vp[0];
    return sum_local(tmp, k);
}

extern "C" __global__ void k_factorial(const unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = factorial(in[i]);
}

extern "C" __global__ void k_fib(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fib(in[i]);
}

// only odd lanes call: a divergent call reconverges before the store of every lane
extern "C" __global__ void k_divergent(const int *a, const int *b, int *lo, int *hi, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i];
    if (i & 1) {
        Pair p = minmax(x, y);
        x = p.lo;
        y = p.hi;
    }
    lo[i] = x;
    hi[i] = y;
}

extern "C" __global__ void k_struct(const float *in, float *out, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Big x;
    for (int k = 0; k < 4; ++k) x.v[k] = in[4 * i + k];
    Big r = scale4(x, s);
    for (int k = 0; k < 4; ++k) out[4 * i + k] = r.v[k];
}

extern "C" __global__ void k_mix(const char *c, const short *h, const long long *q, const double *d, double *out,
                                 int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = mix(c[i], h[i], q[i], d[i]);
}

extern "C" __global__ void k_tree(const int *values, int n, int *out, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) out[i] = subtree_sum(values, n, i);
}

extern "C" __global__ void k_frames(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fill_and_sum(i, 1 + i % 8);
}


// a 32-byte struct by value, indexed with a computed index in the callee (nvcc copies it to the callee's frame)
struct Eight { float v[8]; };
__device__ __noinline__ float pick(Eight b, int k) {
    float s = 0;
    for (int i = 0; i < k; ++i) s += b.v[(i * 3) & 7];
    return s;
}

extern "C" __global__ void k_pick(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Eight b;
    for (int k = 0; k < 8; ++k) b.v[k] = in[8 * i + k];
    out[i] = pick(b, 1 + i % 8);
}
