// Tensor-core issue-rate microbenchmark for gpusim's validation suite, written from the method of the
// Hopper microbenchmark suite (Luo et al., arXiv 2501.12084; its H100 reproduction): every warp runs
// `iters` rounds of 4 independent mma.sync (separate accumulators), so the pipe, not the dependence
// latency, limits the rate. Operands stay in registers; the accumulators are written out at the end.
#include <stdint.h>

extern "C" __global__ void mma_f16_16816(float* out, int iters)
{
    uint32_t a[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u};
    uint32_t b[2] = {0x3c003c00u, 0x3c003c00u};
    float c[4][4] = {{0.f}};
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int q = 0; q < 4; ++q)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                         "{%0,%1,%2,%3};"
                         : "+f"(c[q][0]), "+f"(c[q][1]), "+f"(c[q][2]), "+f"(c[q][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = c[0][0] + c[1][1] + c[2][2] + c[3][3];
}

extern "C" __global__ void mma_f16_1688(float* out, int iters)
{
    uint32_t a[2] = {0x3c003c00u, 0x3c003c00u};
    uint32_t b = 0x3c003c00u;
    float c[4][4] = {{0.f}};
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int q = 0; q < 4; ++q)
            asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
                         "{%0,%1,%2,%3};"
                         : "+f"(c[q][0]), "+f"(c[q][1]), "+f"(c[q][2]), "+f"(c[q][3])
                         : "r"(a[0]), "r"(a[1]), "r"(b));
    }
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = c[0][0] + c[1][1] + c[2][2] + c[3][3];
}

extern "C" __global__ void mma_tf32_1688(float* out, int iters)
{
    uint32_t a[4] = {0x3f800000u, 0x3f800000u, 0x3f800000u, 0x3f800000u};
    uint32_t b[2] = {0x3f800000u, 0x3f800000u};
    float c[4][4] = {{0.f}};
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int q = 0; q < 4; ++q)
            asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                         "{%0,%1,%2,%3};"
                         : "+f"(c[q][0]), "+f"(c[q][1]), "+f"(c[q][2]), "+f"(c[q][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = c[0][0] + c[1][1] + c[2][2] + c[3][3];
}

extern "C" __global__ void mma_s8_16832(int* out, int iters)
{
    uint32_t a[4] = {0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u};
    uint32_t b[2] = {0x01010101u, 0x01010101u};
    int c[4][4] = {{0}};
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int q = 0; q < 4; ++q)
            asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                         "{%0,%1,%2,%3};"
                         : "+r"(c[q][0]), "+r"(c[q][1]), "+r"(c[q][2]), "+r"(c[q][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = c[0][0] + c[1][1] + c[2][2] + c[3][3];
}
