// __constant__ and __device__ variables reached from the host with Module.symbol (tests/test_symbols.py).
__constant__ float coeffs[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ int counter;
__device__ int table[8] = {10, 11, 12, 13, 14, 15, 16, 17};

// out[i] = sum_k coeffs[k] * x[i]^k ; counts the threads in `counter`
extern "C" __global__ void k_poly(const float *x, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], p = 1.0f, s = 0.0f;
    for (int k = 0; k < 4; ++k) { s += coeffs[k] * p; p *= v; }
    out[i] = s;
    atomicAdd(&counter, 1);
}

// reads table[] through a pointer argument (the symbol's address passed from the host)
extern "C" __global__ void k_gather(const int *t, const int *idx, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = t[idx[i]] + table[idx[i]];
}
