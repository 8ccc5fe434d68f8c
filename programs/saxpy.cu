// saxpy: y[i] = alpha * x[i] + y[i] in place (BLAS level 1). nvcc contracts the
// multiply-add into a single fma.rn.f32, rounded once.
extern "C" __global__ void saxpy(int n, float alpha, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = alpha * x[i] + y[i];
    }
}
