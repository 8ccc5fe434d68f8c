// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel random numbers:
// as easy as 1, 2, 3" (SC 2011): ten rounds of two 32x32->64 multiplies, the Weyl key schedule. Two
// kernels: the raw 128-bit outputs of counters (i, 0, 0, seq) and a Monte Carlo estimate of pi from
// integer points (16-bit coordinates, exact arithmetic). Written for gpusim's conformance corpus.
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

__device__ uint4 philox4x32_10(uint4 ctr, uint2 key) {
#pragma unroll
    for (int round = 0; round < 10; ++round) {
        unsigned hi0 = __umulhi(PHILOX_M0, ctr.x), lo0 = PHILOX_M0 * ctr.x;
        unsigned hi1 = __umulhi(PHILOX_M1, ctr.z), lo1 = PHILOX_M1 * ctr.z;
        ctr = make_uint4(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
        key.x += PHILOX_W0;
        key.y += PHILOX_W1;
    }
    return ctr;
}

extern "C" __global__ void philox_fill(uint4 *out, unsigned n, unsigned seq, unsigned key0, unsigned key1) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = philox4x32_10(make_uint4(i, 0, 0, seq), make_uint2(key0, key1));
}

// Each thread draws `draws` outputs (counter (thread, d, 0, 0)); each output gives two points (the low
// and high 16 bits of two words); hits counts x*x + y*y < 65536^2.
extern "C" __global__ void montecarlo_pi(unsigned *hits, unsigned draws, unsigned key0, unsigned key1) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned count = 0;
    for (unsigned d = 0; d < draws; ++d) {
        uint4 r = philox4x32_10(make_uint4(i, d, 0, 0), make_uint2(key0, key1));
        unsigned long long x0 = r.x & 0xffffu, y0 = r.y & 0xffffu, x1 = r.z >> 16, y1 = r.w >> 16;
        count += (x0 * x0 + y0 * y0 < 65536ull * 65536ull);
        count += (x1 * x1 + y1 * y1 < 65536ull * 65536ull);
    }
    hits[i] = count;
}
