// TMA tensor copies as nvcc compiles them (tests/test_tma.py): a tensor map passed as
// `const __grid_constant__ CUtensorMap` (a .param .align 64 .b8 [128] parameter whose address is taken with
// cvta.param), cp.async.bulk.tensor loads completing on an mbarrier, stores and reductions in bulk groups.
// Written here from the PTX ISA. Regenerate with regenerate.sh (the tests never call nvcc).
#include <cstdint>
#include <cuda.h>

__device__ __forceinline__ uint32_t smem(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void wait_parity(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    while (!done) {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    }
}

// Load a 3D box of floats at (x, y, z) into shared memory, then every thread copies the box out linearly
// (the shared-memory image, swizzle included) to `out`.
extern "C" __global__ void tma_load_3d(const __grid_constant__ CUtensorMap map, float* out, int x, int y, int z,
                                       uint32_t bytes) {
    __shared__ alignas(1024) float box[4096];
    __shared__ alignas(8) uint64_t bar;
    const uint32_t b = smem(&bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(b), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4}], [%5];\n"
                     :: "r"(smem(box)), "l"(reinterpret_cast<uint64_t>(&map)), "r"(x), "r"(y), "r"(z), "r"(b)
                     : "memory");
    }
    __syncthreads();
    wait_parity(b, 0);
    for (uint32_t i = threadIdx.x; i < bytes / 4; i += blockDim.x) out[i] = box[i];
}

// Fill shared memory from `in` (linear), then store (op 0) or add-reduce (op 1) the 2D box at (x, y).
extern "C" __global__ void tma_store_2d(const __grid_constant__ CUtensorMap map, const float* in, int x, int y,
                                        uint32_t count, int op) {
    __shared__ alignas(1024) float box[4096];
    for (uint32_t i = threadIdx.x; i < count; i += blockDim.x) box[i] = in[i];
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        if (op == 0) {
            asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n"
                         :: "l"(reinterpret_cast<uint64_t>(&map)), "r"(x), "r"(y), "r"(smem(box)) : "memory");
        } else {
            asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group"
                         " [%0, {%1, %2}], [%3];\n"
                         :: "l"(reinterpret_cast<uint64_t>(&map)), "r"(x), "r"(y), "r"(smem(box)) : "memory");
        }
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
    }
}

// The clock cycles a cp.async.bulk.wait_group.read 0 (read = 1) or wait_group 0 (read = 0) takes after one TMA
// store of the 2D box at (0, 0) from `rows` x 128 bytes of shared memory: out[0].
extern "C" __global__ void tma_store_wait(const __grid_constant__ CUtensorMap map, long long* out, int read) {
    __shared__ alignas(1024) uint8_t box[16384];
    for (int i = threadIdx.x; i < 16384 / 4; i += blockDim.x) reinterpret_cast<uint32_t*>(box)[i] = i;
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n"
                     :: "l"(reinterpret_cast<uint64_t>(&map)), "r"(0), "r"(0), "r"(smem(box)) : "memory");
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        const long long start = clock64();
        if (read) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
        else asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
        out[0] = clock64() - start;
    }
}
