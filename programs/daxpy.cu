// daxpy: y[i] = alpha * x[i] + y[i] in double precision (fma.rn.f64). On GPUs with a
// reduced FP64 rate this is the kernel where the FP64 pipe, not memory, can limit.
extern "C" __global__ void daxpy(int n, double alpha, const double* x, double* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = alpha * x[i] + y[i];
    }
}
