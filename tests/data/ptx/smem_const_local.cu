// Dynamic extern shared memory, __constant__ tables (with initializers), a __device__ global,
// a per-thread local array indexed dynamically, and launch bounds.
__constant__ float coeffs[8] = {1.0f, 0.5f, 0.25f, 0.125f, -1.0f, 3.0f, 2.5f, 0.0f};
__constant__ int offsets[2][4] = {{0, 1, 2, 3}, {-1, -2, -3, -4}};
__device__ unsigned long long global_counter = 5;
__device__ double dscale = 1.5;

extern __shared__ float dyn_smem[];

__global__ void __launch_bounds__(128, 4) stencil(const float* in, float* out, int n, int sel)
{
    float* tile = dyn_smem;
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    float scratch[16];
    for (int k = 0; k < 16; ++k) scratch[k] = tile[(t + k) % blockDim.x] * coeffs[k & 7];
    float acc = scratch[(sel + t) & 15] + scratch[offsets[sel & 1][t & 3] & 15];
    if (i < n) out[i] = acc * (float)dscale;
    if (t == 0) atomicAdd(&global_counter, 1ull);
}

__global__ void __launch_bounds__(256) copy_kernel(const float4* in, float4* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float4 v = in[i]; v.x += 1.0f; out[i] = v; }
}
