// LLM-decode GEMV kernels for the `decode` lab: y[b][row] = sum_k W[row][k] * x[b][k].
//
// gemv_*: one warp per weight row; lane l reads 16-byte vectors l, l + 32, l + 64, ... of the row, so each warp
// load moves 512 contiguous bytes. Every thread first issues UNROLL independent weight loads (2 KiB per
// warp in flight) and only then uses them: the simulator, like the PTX, runs instructions in program order,
// so loads must be independent in the source to be in flight together. Partial sums are reduced across
// the warp with shuffles. Activations x are fp32 and small: they stay in L1/L2.
//
//   gemv_f16_b1 : fp16 weights, one activation row (blockIdx.y picks it: a batch > 1 re-reads the
//                 weights, from L2 when they fit there).
//   gemm_f16_r8_b16 : fp16 weights, 8 weight rows x 16 activation rows per warp (below).
//   gemv_u8     : int8 weights stored with a +128 offset (u8 = s8 + 128) and one fp32 scale per row.
//                 Bytes become floats with the magic-number trick of production dequant kernels:
//                 __byte_perm puts the byte under the exponent of 2^23, and subtracting 2^23 + 128
//                 leaves the signed value (no conversion instruction).
// Requirements: K is a multiple of 8 * 32 * UNROLL (fp16) or 16 * 32 * UNROLL (int8); rows a multiple of
// the warps per block.
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

// Batched decode (a GEMM with a thin side): each warp owns ROWS weight rows and BATCH activation rows and
// keeps a ROWS x BATCH tile of partial sums in registers. Per 8-element chunk of K a lane loads the next
// chunk's ROWS weight vectors (double buffering hides the DRAM latency) and converts the current ones once (fp16 -> fp32 conversions are not free: the conversion pipe is
// narrow), then streams the BATCH activation vectors from L1, loading the next one before using the
// current; every weight value feeds BATCH FMAs and consecutive FMAs go to independent accumulators.
// blockIdx.x picks the block of rows, blockIdx.y the batch group: the blocks of one batch group run
// together and share its activations in L1, and later groups re-read the weights from L2 when they fit.
template <int ROWS, int BATCH>
__device__ __forceinline__ void gemm_f16(const uint4* weights, const float4* x, float* y, int rows, int k8)
{
    int first_row = (blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP) * ROWS;
    int lane = threadIdx.x % WARP;
    int first_batch = blockIdx.y * BATCH;
    float acc[ROWS][BATCH];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            acc[r][b] = 0.0f;
        }
    }
    uint4 w[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        w[r] = weights[(size_t)(first_row + r) * k8 + lane];
    }
    for (int chunk = lane; chunk < k8; chunk += WARP) {
        uint4 w_next[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            w_next[r] = chunk + WARP < k8 ? weights[(size_t)(first_row + r) * k8 + chunk + WARP] : w[r];
        }
        const float4* xchunk = x + (size_t)first_batch * 2 * k8 + 2 * chunk;
        float4 xa = xchunk[0];
        float4 xc = xchunk[1];
        float wf[ROWS][8];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            halves_to_floats(w[r].x, wf[r][0], wf[r][1]);
            halves_to_floats(w[r].y, wf[r][2], wf[r][3]);
            halves_to_floats(w[r].z, wf[r][4], wf[r][5]);
            halves_to_floats(w[r].w, wf[r][6], wf[r][7]);
        }
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            float4 next_a = xa;
            float4 next_c = xc;
            if (b + 1 < BATCH) {
                next_a = xchunk[(size_t)(b + 1) * 2 * k8];
                next_c = xchunk[(size_t)(b + 1) * 2 * k8 + 1];
            }
            float xf[8] = {xa.x, xa.y, xa.z, xa.w, xc.x, xc.y, xc.z, xc.w};
#pragma unroll
            for (int j = 0; j < 8; ++j) {
#pragma unroll
                for (int r = 0; r < ROWS; ++r) {
                    acc[r][b] = fmaf(wf[r][j], xf[j], acc[r][b]);
                }
            }
            xa = next_a;
            xc = next_c;
        }
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            w[r] = w_next[r];
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            float total = warp_sum(acc[r][b]);
            if (lane == 0) {
                y[(size_t)(first_batch + b) * rows + first_row + r] = total;
            }
        }
    }
}

extern "C" __global__ void gemm_f16_r8_b16(const uint4* w, const float4* x, float* y, int rows, int k8)
{
    gemm_f16<8, 16>(w, x, y, rows, k8);
}

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
            acc += dequant_dot4(w[u].x, xb[0]) + dequant_dot4(w[u].y, xb[1])
                 + dequant_dot4(w[u].z, xb[2]) + dequant_dot4(w[u].w, xb[3]);
        }
    }
    float total = warp_sum(acc);
    if (lane == 0) {
        y[row] = total * scales[row];
    }
}
