// hopper_ptx.cuh: the inline-PTX helpers programs/gemm_hopper.cu and programs/labs/attention_hopper.cu share,
// written here from the PTX ISA: shared-memory addresses, the 128-byte-swizzle matrix descriptor and the mbarrier
// operations of a TMA pipeline.
#pragma once
#include <cstdint>

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format"), 128-byte swizzle: start address >> 4, LBO unused
// (1 by convention: a K-major operand's K slice, or an MN-major one's 64 elements, is one swizzle row), SBO =
// 1024 bytes (the next 8 rows), layout type 1 in bits 62-63.
__device__ __forceinline__ uint64_t desc_128b(uint32_t addr) {
    return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32)
           | (uint64_t(1) << 62);
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    while (!done) {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    }
}

__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}
