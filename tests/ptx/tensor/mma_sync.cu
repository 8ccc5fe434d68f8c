// mma.sync fragments built by the PTX ISA's per-lane formulas ("Matrix Fragments for mma.m16n8k*"),
// one kernel per shape x type; gpusim's tests compare D with numpy. Compile: nvcc -arch=sm_90 -ptx mma_sync.cu
// A is M x K row-major, B is K x N row-major, C and D are M x N row-major (raw element bytes).
#include <stdint.h>

template <int EB, int K>
__device__ void frag_a(const uint8_t* A, unsigned* r, int na) {
  int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, epr = 32 / EB, es = EB / 8;
  for (int j = 0; j < na; j++) r[j] = 0;
  for (int i = 0; i < na * epr; i++) {
    int j = i / epr, p = i % epr;
    int row = g + 8 * (j % 2), col = t * epr + p + (K / 2) * (j / 2);
    unsigned bits = 0;
    for (int b = 0; b < es; b++) bits |= (unsigned)A[(row * K + col) * es + b] << (8 * b);
    r[j] |= bits << (p * EB);
  }
}

template <int EB, int K>
__device__ void frag_b(const uint8_t* B, unsigned* r, int nb) {
  int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, epr = 32 / EB, es = EB / 8;
  for (int j = 0; j < nb; j++) r[j] = 0;
  for (int i = 0; i < nb * epr; i++) {
    int j = i / epr, p = i % epr;
    int row = t * epr + p + (K / 2) * j, col = g;
    unsigned bits = 0;
    for (int b = 0; b < es; b++) bits |= (unsigned)B[(row * 8 + col) * es + b] << (8 * b);
    r[j] |= bits << (p * EB);
  }
}

// C/D element i (of 4) of this lane: row g + 8 (i / 2), column 2 t + i % 2
__device__ int c_index(int i) { int lane = threadIdx.x & 31; return ((lane >> 2) + 8 * (i / 2)) * 8 + 2 * (lane & 3) + i % 2; }

#define F32_ACC(NAME, EB, K, NA, NB, TYPES)                                                              \
extern "C" __global__ void NAME(const uint8_t* A, const uint8_t* B, const float* C, float* D) {          \
  unsigned a[4], b[2]; float c[4], d[4];                                                                 \
  frag_a<EB, K>(A, a, NA); frag_b<EB, K>(B, b, NB);                                                      \
  for (int i = 0; i < 4; i++) c[i] = C[c_index(i)];                                                      \
  MMA_##NA##_##NB(TYPES)                                                                                 \
  for (int i = 0; i < 4; i++) D[c_index(i)] = d[i];                                                      \
}
#define MMA_4_2(TYPES) asm volatile("mma.sync.aligned." TYPES " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};" \
  : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), \
    "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#define MMA_2_1(TYPES) asm volatile("mma.sync.aligned." TYPES " {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};" \
  : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(b[0]), \
    "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));

F32_ACC(mma_m16n8k16_f16_f32, 16, 16, 4, 2, "m16n8k16.row.col.f32.f16.f16.f32")
F32_ACC(mma_m16n8k16_bf16_f32, 16, 16, 4, 2, "m16n8k16.row.col.f32.bf16.bf16.f32")
F32_ACC(mma_m16n8k8_f16_f32, 16, 8, 2, 1, "m16n8k8.row.col.f32.f16.f16.f32")
F32_ACC(mma_m16n8k8_bf16_f32, 16, 8, 2, 1, "m16n8k8.row.col.f32.bf16.bf16.f32")
F32_ACC(mma_m16n8k8_tf32_f32, 32, 8, 4, 2, "m16n8k8.row.col.f32.tf32.tf32.f32")
F32_ACC(mma_m16n8k32_e4m3_f32, 8, 32, 4, 2, "m16n8k32.row.col.f32.e4m3.e4m3.f32")
F32_ACC(mma_m16n8k32_e5m2_f32, 8, 32, 4, 2, "m16n8k32.row.col.f32.e5m2.e5m2.f32")
F32_ACC(mma_m16n8k32_e4m3_e5m2_f32, 8, 32, 4, 2, "m16n8k32.row.col.f32.e4m3.e5m2.f32")

// f16 accumulators: C and D are halves (raw 16-bit), two per register, the lower index in the low half
extern "C" __global__ void mma_m16n8k16_f16_f16(const uint8_t* A, const uint8_t* B, const unsigned short* C,
                                                unsigned short* D) {
  unsigned a[4], b[2], c[2], d[2];
  frag_a<16, 16>(A, a, 4); frag_b<16, 16>(B, b, 2);
  for (int j = 0; j < 2; j++) c[j] = C[c_index(2 * j)] | ((unsigned)C[c_index(2 * j + 1)] << 16);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
               : "=r"(d[0]), "=r"(d[1]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
                 "r"(c[0]), "r"(c[1]));
  for (int j = 0; j < 2; j++) { D[c_index(2 * j)] = d[j] & 0xFFFF; D[c_index(2 * j + 1)] = d[j] >> 16; }
}

#define S32_ACC(NAME, TYPES)                                                                             \
extern "C" __global__ void NAME(const uint8_t* A, const uint8_t* B, const int* C, int* D) {              \
  unsigned a[4], b[2]; int c[4], d[4];                                                                   \
  frag_a<8, 32>(A, a, 4); frag_b<8, 32>(B, b, 2);                                                        \
  for (int i = 0; i < 4; i++) c[i] = C[c_index(i)];                                                      \
  asm volatile("mma.sync.aligned." TYPES " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"    \
    : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),       \
      "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));                                  \
  for (int i = 0; i < 4; i++) D[c_index(i)] = d[i];                                                      \
}
S32_ACC(mma_m16n8k32_s8_s32, "m16n8k32.row.col.s32.s8.s8.s32")
S32_ACC(mma_m16n8k32_u8_s32, "m16n8k32.row.col.s32.u8.u8.s32")
S32_ACC(mma_m16n8k32_u8s8_s32, "m16n8k32.row.col.s32.u8.s8.s32")
S32_ACC(mma_m16n8k32_s8_s32_satfinite, "m16n8k32.row.col.satfinite.s32.s8.s8.s32")

// The CUTLASS idiom: cp.async a 16 x 16 A tile and an 8 x 16 (N x K, "column-major B") tile into shared
// memory, wait, then ldmatrix.x4 gives the A fragment and ldmatrix.x2 the B fragment; with trans = 1, B is
// instead a 16 x 8 (K x N) row-major tile read with ldmatrix.x2.trans. D = A B + 0, f32.
extern "C" __global__ void ldmatrix_cp_async_mma(const unsigned short* A, const unsigned short* B, float* D,
                                                 int trans) {
  __shared__ __align__(128) unsigned short sa[16 * 16];
  __shared__ __align__(128) unsigned short sb[16 * 8];
  int lane = threadIdx.x;
  // 512 + 256 bytes in 16-byte pieces: lane copies piece lane (A) and, for lanes < 16, piece lane (B)
  unsigned sa_addr = (unsigned)__cvta_generic_to_shared(sa + lane * 8);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(sa_addr), "l"(A + lane * 8));
  if (lane < 16) {
    unsigned sb_addr = (unsigned)__cvta_generic_to_shared(sb + lane * 8);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(sb_addr), "l"(B + lane * 8));
  }
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_group 0;");
  __syncwarp();
  unsigned a[4], b[2];
  unsigned pa = (unsigned)__cvta_generic_to_shared(sa + (lane % 16) * 16 + (lane / 16) * 8);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
  if (trans) {
    unsigned pb = (unsigned)__cvta_generic_to_shared(sb + (lane % 16) * 8);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
  } else {
    unsigned pb = (unsigned)__cvta_generic_to_shared(sb + (lane % 8) * 16 + ((lane / 8) % 2) * 8);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
  }
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),
                 "r"(b[0]), "r"(b[1]));
  for (int i = 0; i < 4; i++) D[c_index(i)] = d[i];
}

// cp.async with a src-size smaller than the copy (zero fill), 4 and 8 bytes, and wait_all.
extern "C" __global__ void cp_async_zero_fill(const unsigned* src, unsigned* dst, int src_bytes) {
  __shared__ __align__(16) unsigned s[32 * 4 + 64];
  int lane = threadIdx.x;
  unsigned p = (unsigned)__cvta_generic_to_shared(s + lane * 4);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(p), "l"(src + lane * 4), "r"(src_bytes));
  unsigned q = (unsigned)__cvta_generic_to_shared(s + 128 + lane);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(q), "l"(src + 128 + lane));
  asm volatile("cp.async.wait_all;");
  for (int i = 0; i < 4; i++) dst[lane * 4 + i] = s[lane * 4 + i];
  dst[128 + lane] = s[128 + lane];
}
