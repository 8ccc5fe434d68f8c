// szext and bmsk (PTX ISA 7.6, sm_70): bmsk through libcu++'s cuda::ptx wrappers, szext (no wrapper in CUDA 13.0's
// libcu++) as inline PTX. Thread i applies all six forms to a[i] and b[i] (b: the width, bmsk's a: the position).
#include <cuda/ptx>

__device__ __forceinline__ unsigned szext_wrap_s32(unsigned x, unsigned n) {
    unsigned d; asm("szext.wrap.s32 %0, %1, %2;" : "=r"(d) : "r"(x), "r"(n)); return d;
}
__device__ __forceinline__ unsigned szext_clamp_s32(unsigned x, unsigned n) {
    unsigned d; asm("szext.clamp.s32 %0, %1, %2;" : "=r"(d) : "r"(x), "r"(n)); return d;
}
__device__ __forceinline__ unsigned szext_wrap_u32(unsigned x, unsigned n) {
    unsigned d; asm("szext.wrap.u32 %0, %1, %2;" : "=r"(d) : "r"(x), "r"(n)); return d;
}
__device__ __forceinline__ unsigned szext_clamp_u32(unsigned x, unsigned n) {
    unsigned d; asm("szext.clamp.u32 %0, %1, %2;" : "=r"(d) : "r"(x), "r"(n)); return d;
}

extern "C" __global__ void bits(const unsigned* a, const unsigned* b, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = a[i], n = b[i];
    out[6 * i + 0] = szext_wrap_s32(x, n);
    out[6 * i + 1] = szext_clamp_s32(x, n);
    out[6 * i + 2] = szext_wrap_u32(x, n);
    out[6 * i + 3] = szext_clamp_u32(x, n);
    out[6 * i + 4] = cuda::ptx::bmsk_wrap(x, n);
    out[6 * i + 5] = cuda::ptx::bmsk_clamp(x, n);
}
