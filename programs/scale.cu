// scale: x[i] = alpha * x[i] in place; one load and one store per element.
extern "C" __global__ void scale(float* x, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = alpha * x[i];
    }
}
