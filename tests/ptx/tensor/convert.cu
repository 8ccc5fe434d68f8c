// The tensor-core number formats in cvt, one kernel, one thread per input pair.
// Compile: nvcc -arch=sm_90 -ptx convert.cu
extern "C" __global__ void convert(const float* x, const float* y, unsigned* e4m3, unsigned* e5m2,
                                   unsigned* e4m3_h, unsigned* tf32, unsigned* back, unsigned* h2, unsigned* bf2,
                                   int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned short p, q, r; unsigned t, u, hh, bb;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(p) : "f"(x[i]), "f"(y[i]));
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(q) : "f"(x[i]), "f"(y[i]));
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(hh) : "f"(x[i]), "f"(y[i]));
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(bb) : "f"(x[i]), "f"(y[i]));
  asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(r) : "r"(hh));
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(t) : "f"(x[i]));
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(u) : "h"(p));
  e4m3[i] = p; e5m2[i] = q; e4m3_h[i] = r; tf32[i] = t; back[i] = u; h2[i] = hh; bf2[i] = bb;
}
