// Tensor-core roofline probe: a grid-stride loop in which each warp takes 4 tiles of 512 bytes per step
// (16 bytes per lane each, loaded as a uint4; the 4 tiles are one grid-wide sweep apart, so every byte is
// read once). A tile is the warp's A fragment of an m16n8k16 bf16 mma (4 registers per lane) and its first
// two registers the B fragment; the warp runs `rounds` rounds of 4 independent
// mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32, one per tile (4 accumulators, so 4 mma are in flight), then
// moves on. The next step's 4 loads are issued before this step's mma (software pipelining), so 2 KiB per
// warp stay in flight while it computes. Per step: 2048 bytes from DRAM and rounds x 4 x 4096 FLOPs, i.e.
// 8 x rounds FLOP per byte. The accumulators are summed and stored once per thread at the end (16 bytes
// per thread, beside tiles x 512 bytes read). Launch with tile_count a multiple of 4 x the grid's warps so
// that every warp does the same work.
#include <cstdint>

#define TILES_PER_STEP 4

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
    float acc[TILES_PER_STEP][4] = {};
    uint4 next[TILES_PER_STEP];
#pragma unroll
    for (int j = 0; j < TILES_PER_STEP; ++j) {
        int t = tile + j * warps;
        next[j] = t < tile_count ? tiles[(size_t)t * 32 + lane] : make_uint4(0, 0, 0, 0);
    }
    for (; tile < tile_count; tile += TILES_PER_STEP * warps) {
        uint4 a[TILES_PER_STEP];
#pragma unroll
        for (int j = 0; j < TILES_PER_STEP; ++j) {
            a[j] = next[j];
            int t = tile + (TILES_PER_STEP + j) * warps;
            if (t < tile_count) {
                next[j] = tiles[(size_t)t * 32 + lane];
            }
        }
        for (int round = 0; round < rounds; ++round) {
#pragma unroll
            for (int j = 0; j < TILES_PER_STEP; ++j) {
                mma_bf16(acc[j], a[j], a[j].x, a[j].y);
            }
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] =
        make_float4(acc[0][0] + acc[1][0] + acc[2][0] + acc[3][0], acc[0][1] + acc[1][1] + acc[2][1] + acc[3][1],
                    acc[0][2] + acc[1][2] + acc[2][2] + acc[3][2], acc[0][3] + acc[1][3] + acc[2][3] + acc[3][3]);
}
