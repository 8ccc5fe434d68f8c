// mma_ptx.cuh: the inline-PTX wrappers the mma.sync GEMMs of this folder share (gemm_bf16_mma.cu,
// gemm_mma_wide.cu), written here from the PTX ISA: shared-window addresses, cp.async with src-size zero fill
// and its groups, ldmatrix.x4, and the bf16 -> fp32 m16n8k16 mma.sync.
#pragma once
#include <cstdint>

__device__ __forceinline__ uint32_t shared_address(const void* pointer)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

__device__ __forceinline__ void cp_async_16(uint32_t destination, const void* source, int bytes)
{
    // bytes < 16 zero-fills the rest (src-size); 0 reads nothing and writes 16 zero bytes
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(destination), "l"(source), "r"(bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int PENDING>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING)); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// d += a b: one m16n8k16 tile, bf16 inputs, fp32 accumulators (the PTX ISA's fragment layouts)
__device__ __forceinline__ void mma_bf16_f32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
