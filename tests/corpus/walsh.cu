// Fast Walsh-Hadamard transform (natural / Sylvester order) of independent vectors of 2 * blockDim
// elements, one vector per block, butterflies in shared memory. Written for gpusim's conformance corpus.
extern "C" __global__ void fast_walsh(float *data) {
    extern __shared__ float s[];
    unsigned t = threadIdx.x, n = 2 * blockDim.x;
    float *v = data + blockIdx.x * n;
    s[t] = v[t];
    s[t + blockDim.x] = v[t + blockDim.x];
    for (unsigned stride = n / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        unsigned pos = 2 * t - (t & (stride - 1));
        float a = s[pos], b = s[pos + stride];
        s[pos] = a + b;
        s[pos + stride] = a - b;
    }
    __syncthreads();
    v[t] = s[t];
    v[t + blockDim.x] = s[t + blockDim.x];
}
