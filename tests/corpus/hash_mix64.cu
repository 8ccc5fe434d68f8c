// 64-bit integer kernels: MurmurHash3's fmix64 finalizer over 64-bit keys, and a modular product
// (a * b mod m with a 64-bit product and remainder, and the high half of a 64 x 64 multiply).
// Written for gpusim's conformance corpus.
extern "C" __global__ void fmix64(const unsigned long long *keys, unsigned long long *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long k = keys[i];
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    out[i] = k;
}

extern "C" __global__ void mod_mul(const unsigned *a, const unsigned *b, const unsigned *m, unsigned *out,
                                   unsigned long long *high, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long x = a[i], y = b[i];
    out[i] = (unsigned)((x * y) % m[i]);
    unsigned long long wide_a = (x << 32) | y, wide_b = (y << 32) | m[i];
    high[i] = __umul64hi(wide_a, wide_b);
}
