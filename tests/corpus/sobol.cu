// Sobol quasirandom points: point i of dimension d is the XOR of the direction numbers V[d][k] for the
// set bits k of the Gray code i ^ (i >> 1), scaled by 2^-32. The direction numbers (Joe and Kuo's
// primitive polynomials and initial m values) are computed on the host. One thread per (point, dim).
// Written for gpusim's conformance corpus.
extern "C" __global__ void sobol(float *out, unsigned *bits, const unsigned *directions, unsigned n_points,
                                 unsigned n_dims) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned d = blockIdx.y;
    if (i >= n_points || d >= n_dims) return;
    const unsigned *v = directions + d * 32;
    unsigned gray = i ^ (i >> 1), x = 0;
    for (int k = 0; gray != 0; ++k, gray >>= 1)
        if (gray & 1u) x ^= v[k];
    bits[d * n_points + i] = x;
    out[d * n_points + i] = (float)x * 2.3283064365386963e-10f;
}
