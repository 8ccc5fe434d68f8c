// A call through a function pointer: nvcc emits an indirect `call (ret), %rd, (args), prototype;`,
// which gpusim refuses with an UnsupportedPTXError naming the line (tests/test_calls.py).
typedef int (*op_t)(int);
__device__ __noinline__ int twice(int x) { return 2 * x; }
__device__ __noinline__ int square(int x) { return x * x; }

extern "C" __global__ void k_indirect(const int *in, int *out, int n, int which) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    op_t f = (which & 1) ? square : twice;
    if (i < n) out[i] = f(in[i]);
}

extern "C" __global__ void k_direct(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = twice(in[i]);
}
