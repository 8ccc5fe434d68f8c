// Tensor-core roofline probe: a grid-stride loop over 512-byte tiles, one per warp per step (16 bytes per
// lane, loaded as one uint4). The tile is the warp's A fragment of an m16n8k16 bf16 mma (4 registers per
// lane) and its first two registers the B fragment; the warp runs `rounds` rounds of 4 independent
// mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32 on it (4 accumulators, so 4 mma are in flight per warp), then
// moves on. Each warp issues the load of its next tile before computing on the current one (software
// pipelining), so its DRAM traffic overlaps its mma. Per tile: 512 bytes from DRAM and
// rounds x 4 x 4096 FLOPs = 32 x rounds FLOP per byte. The accumulators are summed and stored once per
// thread at the end (16 bytes per thread, beside tiles x 512 bytes read).
#include <cstdint>

__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint4& a, uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
}

extern "C" __global__ void tensor_intensity(const uint4* tiles, float4* out, int tile_count, int rounds)
{
    const int lane = threadIdx.x % 32;
    const int warps = gridDim.x * blockDim.x / 32;
    int tile = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    float acc[4][4] = {};
    uint4 next = tile < tile_count ? tiles[(size_t)tile * 32 + lane] : make_uint4(0, 0, 0, 0);
    for (; tile < tile_count; tile += warps) {
        const uint4 a = next;
        if (tile + warps < tile_count) {
            next = tiles[(size_t)(tile + warps) * 32 + lane];
        }
        for (int round = 0; round < rounds; ++round) {
            mma_bf16(acc[0], a, a.x, a.y);
            mma_bf16(acc[1], a, a.y, a.z);
            mma_bf16(acc[2], a, a.z, a.w);
            mma_bf16(acc[3], a, a.w, a.x);
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] =
        make_float4(acc[0][0] + acc[1][0] + acc[2][0] + acc[3][0], acc[0][1] + acc[1][1] + acc[2][1] + acc[3][1],
                    acc[0][2] + acc[1][2] + acc[2][2] + acc[3][2], acc[0][3] + acc[1][3] + acc[2][3] + acc[3][3]);
}
