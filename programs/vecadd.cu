// vecadd: c[i] = a[i] + b[i], one thread per element. The "hello world" of GPU kernels:
// perfectly coalesced, memory-bound, no reuse.
extern "C" __global__ void vecadd(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
