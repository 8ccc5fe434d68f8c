// A __noinline__ device function forces PTX `call` with .param return value and parameters.
__device__ __noinline__ float saxpy_one(float a, float x, float y)
{
    return a * x + y;
}

struct Pair { float a; int b; };

__device__ __noinline__ Pair make_pair(float a, int b)
{
    Pair p; p.a = a * 2.0f; p.b = b + 1; return p;
}

__device__ __noinline__ void store_one(float* p, float v)
{
    *p = v;
}

__global__ void call_kernel(float a, const float* x, float* y, int* z, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float r = saxpy_one(a, x[i], y[i]);
        Pair p = make_pair(r, i);
        store_one(&y[i], p.a);
        z[i] = p.b;
    }
}
