// LLM-decode kernels for the `decode` lab: y[b][row] = sum_k W[row][k] * x[b][k].
//
// gemv_*: one warp per weight row; lane l reads 16-byte vectors l, l + 32, l + 64, ... of the row, so each warp
// load moves 512 contiguous bytes. Every thread first issues UNROLL independent weight loads (2 KiB per
// warp in flight) and only then uses them: the simulator, like the PTX, runs instructions in program order,
// so loads must be independent in the source to be in flight together. Partial sums are reduced across
// the warp with shuffles. Activations x are fp32 and small: they stay in L1/L2.
//
//   gemv_f16_b1 : fp16 weights, one activation row (blockIdx.y picks it: a batch > 1 re-reads the
//                 weights, from L2 when they fit there).
//   gemm_f16_nN : fp16 weights, a batch: a shared-memory tiled GEMM with batch tile N (below).
//   gemv_u8     : int8 weights stored with a +128 offset (u8 = s8 + 128) and one fp32 scale per row.
//                 Bytes become floats with the magic-number trick of production dequant kernels:
//                 __byte_perm puts the byte under the exponent of 2^23, and subtracting 2^23 + 128
//                 leaves the signed value (no conversion instruction).
// Requirements (GEMVs): K is a multiple of 8 * 32 * UNROLL (fp16) or 16 * 32 * UNROLL (int8); rows a
// multiple of the warps per block.
#include <cuda_fp16.h>

#define UNROLL 4
#define WARP 32

__device__ __forceinline__ float warp_sum(float value)
{
#pragma unroll
    for (int offset = WARP / 2; offset > 0; offset /= 2) {
        value += __shfl_xor_sync(0xffffffffu, value, offset);
    }
    return value;
}

__device__ __forceinline__ void halves_to_floats(unsigned int bits, float& low, float& high)
{
    __half2 pair = *reinterpret_cast<__half2*>(&bits);
    float2 both = __half22float2(pair);
    low = both.x;
    high = both.y;
}

template <int BATCH>
__device__ __forceinline__ void gemv_f16(const uint4* weights, const float4* x, float* y, int rows, int k8)
{
    int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    int first_batch = blockIdx.y * BATCH;
    const uint4* weight_row = weights + (size_t)row * k8;
    float acc[BATCH];
#pragma unroll
    for (int b = 0; b < BATCH; ++b) {
        acc[b] = 0.0f;
    }
    for (int chunk = lane; chunk < k8; chunk += WARP * UNROLL) {
        uint4 w[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            w[u] = weight_row[chunk + WARP * u];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            float wf[8];
            halves_to_floats(w[u].x, wf[0], wf[1]);
            halves_to_floats(w[u].y, wf[2], wf[3]);
            halves_to_floats(w[u].z, wf[4], wf[5]);
            halves_to_floats(w[u].w, wf[6], wf[7]);
#pragma unroll
            for (int b = 0; b < BATCH; ++b) {
                const float4* xb = x + (size_t)(first_batch + b) * 2 * k8 + 2 * (chunk + WARP * u);
                float4 xa = xb[0];
                float4 xc = xb[1];
                acc[b] += wf[0] * xa.x + wf[1] * xa.y + wf[2] * xa.z + wf[3] * xa.w
                        + wf[4] * xc.x + wf[5] * xc.y + wf[6] * xc.z + wf[7] * xc.w;
            }
        }
    }
#pragma unroll
    for (int b = 0; b < BATCH; ++b) {
        float total = warp_sum(acc[b]);
        if (lane == 0) {
            y[(size_t)(first_batch + b) * rows + row] = total;
        }
    }
}

extern "C" __global__ void gemv_f16_b1(const uint4* w, const float4* x, float* y, int rows, int k8)
{
    gemv_f16<1>(w, x, y, rows, k8);
}

// Batched decode as a register-tiled GEMM (SGEMM-style): y[b][row] = sum_k W[row][k] x[b][k] for a block
// tile of BM weight rows x BN activation rows (blockIdx.x picks the rows, blockIdx.y the batch tile, so the
// blocks that run together share their activation tile in L1/L2 and each weight tile streams from DRAM once
// per batch tile).
//   * Per K-slice of BK, each thread loads its share of the fp16 weight tile (uint4 = 8 halves) and of the
//     fp32 activation tile (float4) into registers, converts the weights to fp32 once and stores both
//     K-major into shared memory (w_tile[k][row], x_tile[k][batch]). A weight row's slice is one 32-byte
//     sector, read by one warp request (two neighbouring lanes), so each sector is fetched once.
//   * Every thread then accumulates a TM x TN register tile with FFMAs: per k it reads TM weights and TN
//     activations as float4s (ld.shared.v4) and does TM x TN FFMAs, so a value read from shared memory
//     feeds TN (or TM) FFMAs and a converted weight feeds BN of them.
//   * The next slice's global loads are issued before this slice's FFMAs (register prefetch) and the shared
//     tiles are double-buffered, so one barrier per slice suffices; the fragment reads of k + 1 are spread
//     between the FFMAs of k (the PTX order is the issue order).
// Layout: thread t owns row group t % (BM / TM) and batch group t / (BM / TM). Its TM rows are TM / 4 runs
// of 4 at stride BM / (TM / 4) (its TN batch rows likewise), so the 8 lanes of one quarter-warp phase of a
// 16-byte access read 8 consecutive runs of weights (conflict-free) and one run of activations (a
// broadcast). The transposing tile stores are made conflict-free by XOR swizzles that move whole runs of 4:
// weight K-chunk c (8 halves) of row r goes to column r ^ 16 (c % 2), activation K-chunk c (4 floats) of
// batch row n to column n ^ 8 (c % 4).
// Rows and batch need not be multiples of the tile (loads are zero-filled, stores checked); K must be a
// multiple of BK = 16.
#define W_SWIZZLE(chunk) (((chunk) & 1) << 4)
#define X_SWIZZLE(chunk) (((chunk) & 3) << 3)

// fp16 pair -> two floats: one unpack and two conversions (__half22float2 unpacks once per half)
__device__ __forceinline__ void unpack_halves(unsigned int bits, float& low, float& high)
{
    asm("{.reg .f16 lo, hi;\n\tmov.b32 {lo, hi}, %2;\n\tcvt.f32.f16 %0, lo;\n\tcvt.f32.f16 %1, hi;}"
        : "=f"(low), "=f"(high) : "r"(bits));
}

template <int BM, int BN, int BK, int TM, int TN>
__device__ __forceinline__ void gemm_f16_tiled(const uint4* __restrict__ weights, const float4* __restrict__ x,
                                               float* __restrict__ y, int rows, int batch, int k8)
{
    constexpr int ROW_GROUPS = BM / TM;
    constexpr int BATCH_GROUPS = BN / TN;
    constexpr int THREADS = ROW_GROUPS * BATCH_GROUPS;
    constexpr int W_CHUNKS = BK / 8;                   // uint4 per weight row per slice
    constexpr int X_CHUNKS = BK / 4;                   // float4 per activation row per slice
    constexpr int W_LOADS = BM * W_CHUNKS / THREADS;   // uint4 per thread per slice
    constexpr int X_LOADS = (BN * X_CHUNKS + THREADS - 1) / THREADS;
    constexpr int X_STRIDE = BN < 32 ? 32 : BN;        // the activation swizzle spans 32 columns
    constexpr int TM4 = TM / 4;
    constexpr int TN4 = TN / 4;
    static_assert(BM * W_CHUNKS % THREADS == 0 && BM % 32 == 0 && ROW_GROUPS >= 8, "tile shape");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 16 == 0, "fragments are float4 runs");
    __shared__ __align__(16) float w_tile[2][BK][BM];
    __shared__ __align__(16) float x_tile[2][BK][X_STRIDE];

    const int tid = threadIdx.x;
    const int row_group = tid % ROW_GROUPS;
    const int batch_group = tid / ROW_GROUPS;
    const int first_row = blockIdx.x * BM;
    const int first_batch = blockIdx.y * BN;
    const int x4 = 2 * k8;                             // float4 per activation row
    const int slices = k8 / W_CHUNKS;

    uint4 w_next[W_LOADS];
    float4 x_next[X_LOADS];
    auto load_slice = [&](int slice) {                 // global -> registers
#pragma unroll
        for (int i = 0; i < W_LOADS; ++i) {
            int v = tid + i * THREADS;
            int row = first_row + v / W_CHUNKS;
            w_next[i] = row < rows ? weights[(size_t)row * k8 + slice * W_CHUNKS + v % W_CHUNKS]
                                   : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int i = 0; i < X_LOADS; ++i) {
            int v = tid + i * THREADS;
            int b = first_batch + v / X_CHUNKS;
            bool inside = v < BN * X_CHUNKS && b < batch;
            x_next[i] = inside ? x[(size_t)b * x4 + slice * X_CHUNKS + v % X_CHUNKS]
                               : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
    };
    auto store_slice = [&](int buf) {                  // registers -> shared, weights converted once
#pragma unroll
        for (int i = 0; i < W_LOADS; ++i) {
            int v = tid + i * THREADS;
            int chunk = v % W_CHUNKS;
            int column = (v / W_CHUNKS) ^ W_SWIZZLE(chunk);
            float wf[8];
            unpack_halves(w_next[i].x, wf[0], wf[1]);
            unpack_halves(w_next[i].y, wf[2], wf[3]);
            unpack_halves(w_next[i].z, wf[4], wf[5]);
            unpack_halves(w_next[i].w, wf[6], wf[7]);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                w_tile[buf][8 * chunk + j][column] = wf[j];
            }
        }
#pragma unroll
        for (int i = 0; i < X_LOADS; ++i) {
            int v = tid + i * THREADS;
            if (v < BN * X_CHUNKS) {
                int chunk = v % X_CHUNKS;
                int column = (v / X_CHUNKS) ^ X_SWIZZLE(chunk);
                x_tile[buf][4 * chunk][column] = x_next[i].x;
                x_tile[buf][4 * chunk + 1][column] = x_next[i].y;
                x_tile[buf][4 * chunk + 2][column] = x_next[i].z;
                x_tile[buf][4 * chunk + 3][column] = x_next[i].w;
            }
        }
    };
    // fragment reads: run f of the weights (f < TM4) or run f - TM4 of the activations at k
    auto weight_run = [&](int buf, int k, int f) {
        return *reinterpret_cast<const float4*>(
            &w_tile[buf][k][(f * (BM / TM4) + 4 * row_group) ^ W_SWIZZLE(k / 8)]);
    };
    auto activation_run = [&](int buf, int k, int f) {
        return *reinterpret_cast<const float4*>(
            &x_tile[buf][k][(f * (BN / TN4) + 4 * batch_group) ^ X_SWIZZLE(k / 4)]);
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    load_slice(0);
    store_slice(0);
    __syncthreads();
    for (int slice = 0; slice < slices; ++slice) {
        const int buf = slice & 1;
        if (slice + 1 < slices) {
            load_slice(slice + 1);
        }
        float4 a[2][TM4];
        float4 b[2][TN4];
#pragma unroll
        for (int f = 0; f < TM4; ++f) {
            a[0][f] = weight_run(buf, 0, f);
        }
#pragma unroll
        for (int f = 0; f < TN4; ++f) {
            b[0][f] = activation_run(buf, 0, f);
        }
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int cur = k & 1;
            const float* af = reinterpret_cast<const float*>(a[cur]);
            const float* bf = reinterpret_cast<const float*>(b[cur]);
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                // the fragment reads of k + 1, one every TM / (TM4 + TN4) rows of this k's FFMAs
#pragma unroll
                for (int f = 0; f < TM4 + TN4; ++f) {
                    if (k + 1 < BK && i == f * TM / (TM4 + TN4)) {
                        if (f < TM4) {
                            a[cur ^ 1][f] = weight_run(buf, k + 1, f);
                        } else {
                            b[cur ^ 1][f - TM4] = activation_run(buf, k + 1, f - TM4);
                        }
                    }
                }
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
                }
            }
        }
        if (slice + 1 < slices) {
            store_slice(buf ^ 1);
        }
        __syncthreads();
    }
    // write the tile: a run of 4 rows is one float4 store when the row count keeps it 16-byte aligned
    const bool vector_rows = rows % 4 == 0;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        int column = first_batch + (j / 4) * (BN / TN4) + 4 * batch_group + j % 4;
        if (column < batch) {
#pragma unroll
            for (int r = 0; r < TM4; ++r) {
                int row = first_row + r * (BM / TM4) + 4 * row_group;
                float* out = y + (size_t)column * rows + row;
                if (vector_rows && row < rows) {
                    *reinterpret_cast<float4*>(out) =
                        make_float4(acc[4 * r][j], acc[4 * r + 1][j], acc[4 * r + 2][j], acc[4 * r + 3][j]);
                } else {
#pragma unroll
                    for (int i = 0; i < 4; ++i) {
                        if (row + i < rows) {
                            out[i] = acc[4 * r + i][j];
                        }
                    }
                }
            }
        }
    }
}

// gemm_f16_nN: batch tile N. Small tiles waste no FLOPs on short batches but convert a weight for fewer
// FFMAs; the lab launches the smallest tile that covers the batch (see gpusim/labs/decode.py).
// Threads per block = (BM / TM) x (BN / TN).
#define GEMM_F16(NAME, BM, BN, TM, TN)                                                                        \
    extern "C" __global__ void __launch_bounds__((BM / TM) * (BN / TN))                                      \
        NAME(const uint4* w, const float4* x, float* y, int rows, int batch, int k8)                         \
    {                                                                                                         \
        gemm_f16_tiled<BM, BN, 16, TM, TN>(w, x, y, rows, batch, k8);                                         \
    }

GEMM_F16(gemm_f16_n8, 128, 8, 4, 8)       // 32 threads
GEMM_F16(gemm_f16_n16, 128, 16, 8, 8)     // 32 threads
GEMM_F16(gemm_f16_n32, 256, 32, 16, 8)    // 64 threads
GEMM_F16(gemm_f16_n64, 256, 64, 16, 8)    // 128 threads
GEMM_F16(gemm_f16_n128, 256, 128, 16, 8)  // 256 threads

__device__ __forceinline__ float dequant_dot4(unsigned int bits, float4 xv)
{
    const float offset = 8388736.0f;  // 2^23 + 128
    float w0 = __int_as_float(__byte_perm(bits, 0x4b000000u, 0x7650)) - offset;
    float w1 = __int_as_float(__byte_perm(bits, 0x4b000000u, 0x7651)) - offset;
    float w2 = __int_as_float(__byte_perm(bits, 0x4b000000u, 0x7652)) - offset;
    float w3 = __int_as_float(__byte_perm(bits, 0x4b000000u, 0x7653)) - offset;
    return w0 * xv.x + w1 * xv.y + w2 * xv.z + w3 * xv.w;
}

extern "C" __global__ void gemv_u8(const uint4* weights, const float* scales, const float4* x, float* y,
                                   int rows, int k16)
{
    int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    const uint4* weight_row = weights + (size_t)row * k16;
    float acc = 0.0f;
    for (int chunk = lane; chunk < k16; chunk += WARP * UNROLL) {
        uint4 w[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            w[u] = weight_row[chunk + WARP * u];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const float4* xb = x + 4 * (chunk + WARP * u);
            // lanes read their 4 x vectors in a rotated order ((lane / 2 + j) % 4): lanes 64 bytes apart would
            // otherwise all read the same 4 of L1's 32 banks at once (a 4-way conflict in the data stage)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                int part = ((lane >> 1) + j) & 3;
                unsigned int bits = part == 0 ? w[u].x : part == 1 ? w[u].y : part == 2 ? w[u].z : w[u].w;
                acc += dequant_dot4(bits, xb[part]);
            }
        }
    }
    float total = warp_sum(acc);
    if (lane == 0) {
        y[row] = total * scales[row];
    }
}
