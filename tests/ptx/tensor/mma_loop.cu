// Register-resident mma.sync throughput: each warp runs `n` iterations of 4 independent
// m16n8k16 f16 -> f32 mma.sync (4 accumulators), operands never reloaded. Compile: nvcc -arch=sm_90 -ptx mma_loop.cu
extern "C" __global__ void mma_loop_f16_f32(const unsigned* a, float* d, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned r0 = a[(threadIdx.x * 4 + 0) % 64], r1 = a[(threadIdx.x * 4 + 1) % 64];
  unsigned r2 = a[(threadIdx.x * 4 + 2) % 64], r3 = a[(threadIdx.x * 4 + 3) % 64];
  float acc[4][4] = {};
  for (int it = 0; it < n; it++) {
#pragma unroll
    for (int j = 0; j < 4; j++)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                   : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                   : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(r0), "r"(r1));
  }
  float s = 0.f;
  for (int j = 0; j < 4; j++) for (int i = 0; i < 4; i++) s += acc[j][i];
  d[t] = s;
}

// The same with one accumulator (a dependent chain): one mma per result latency per warp.
extern "C" __global__ void mma_chain_f16_f32(const unsigned* a, float* d, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned r0 = a[(threadIdx.x * 4 + 0) % 64], r1 = a[(threadIdx.x * 4 + 1) % 64];
  unsigned r2 = a[(threadIdx.x * 4 + 2) % 64], r3 = a[(threadIdx.x * 4 + 3) % 64];
  float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
  for (int it = 0; it < n; it++)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3) : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(r0), "r"(r1));
  d[t] = c0 + c1 + c2 + c3;
}
