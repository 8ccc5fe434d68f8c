// WMMA (nvcuda::wmma) kernels, one per shape x type x layout: D = A B + C with A M x K, B K x N and C, D
// M x N, stored with the layouts in the kernel's name (A, B, C/D), packed (leading dimension = the row length
// for row-major, the column length for col-major).
// Compile: nvcc -arch=sm_90 -ptx wmma.cu
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

#define WMMA_KERNEL(NAME, M, N, K, TA, TFRAG, TC, LA, LB, LC, LDA, LDB, LDC)                               \
extern "C" __global__ void NAME(const TA* a, const TA* b, const TC* c, TC* d) {                          \
  wmma::fragment<wmma::matrix_a, M, N, K, TFRAG, wmma::LA##_major> fa;                                   \
  wmma::fragment<wmma::matrix_b, M, N, K, TFRAG, wmma::LB##_major> fb;                                   \
  wmma::fragment<wmma::accumulator, M, N, K, TC> fc;                                                      \
  wmma::load_matrix_sync(fa, a, LDA);                                                                     \
  wmma::load_matrix_sync(fb, b, LDB);                                                                     \
  wmma::load_matrix_sync(fc, c, LDC, wmma::mem_##LC##_major);                                             \
  CONVERT_##TFRAG                                                                                         \
  wmma::mma_sync(fc, fa, fb, fc);                                                                         \
  wmma::store_matrix_sync(d, fc, LDC, wmma::mem_##LC##_major);                                            \
}
#define CONVERT_half
#define CONVERT___nv_bfloat16
#define CONVERT_int8
#define CONVERT_uint8
#define CONVERT_tf32                                                                                      \
  for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);                    \
  for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
typedef signed char int8;
typedef unsigned char uint8;
typedef wmma::precision::tf32 tf32;

#define SHAPES(PREFIX, TA, TFRAG, TC)                                                                     \
  WMMA_KERNEL(PREFIX##_m16n16k16_row_col_row, 16, 16, 16, TA, TFRAG, TC, row, col, row, 16, 16, 16)      \
  WMMA_KERNEL(PREFIX##_m16n16k16_col_row_col, 16, 16, 16, TA, TFRAG, TC, col, row, col, 16, 16, 16)      \
  WMMA_KERNEL(PREFIX##_m32n8k16_row_col_row, 32, 8, 16, TA, TFRAG, TC, row, col, row, 16, 16, 8)         \
  WMMA_KERNEL(PREFIX##_m32n8k16_col_row_col, 32, 8, 16, TA, TFRAG, TC, col, row, col, 32, 8, 32)         \
  WMMA_KERNEL(PREFIX##_m8n32k16_row_col_row, 8, 32, 16, TA, TFRAG, TC, row, col, row, 16, 16, 32)        \
  WMMA_KERNEL(PREFIX##_m8n32k16_col_row_col, 8, 32, 16, TA, TFRAG, TC, col, row, col, 8, 32, 8)

SHAPES(wmma_f16_f32, half, half, float)
SHAPES(wmma_f16_f16, half, half, half)
SHAPES(wmma_bf16_f32, __nv_bfloat16, __nv_bfloat16, float)
SHAPES(wmma_s8_s32, int8, int8, int)
SHAPES(wmma_u8_s32, uint8, uint8, int)
WMMA_KERNEL(wmma_tf32_f32_m16n16k8_row_col_row, 16, 16, 8, float, tf32, float, row, col, row, 8, 8, 16)
WMMA_KERNEL(wmma_tf32_f32_m16n16k8_col_row_col, 16, 16, 8, float, tf32, float, col, row, col, 16, 16, 16)
