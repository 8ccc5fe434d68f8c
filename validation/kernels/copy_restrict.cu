// memcpy by access width in the form yencal's width post publishes it
// (https://yencal.github.io/gpu-memory-throughput-optimization/), written here from its description: byte
// buffers behind `__restrict__` pointers, reinterpreted as words of the point's width; a grid-stride loop over
// the whole words with size_t indices, then a second one over the bytes past the last whole word. memory.cu's
// copy_w* (no __restrict__, one loop) is the form the H200 case measured.
#include <stdint.h>

template <typename W>
__device__ __forceinline__ void copy_as(int8_t* __restrict__ dst, const int8_t* __restrict__ src, size_t bytes)
{
    const size_t first = blockIdx.x * blockDim.x + threadIdx.x;
    const size_t step = blockDim.x * gridDim.x;
    const size_t words = bytes / sizeof(W);
    W* __restrict__ out = reinterpret_cast<W*>(dst);
    const W* __restrict__ in = reinterpret_cast<const W*>(src);
    for (size_t i = first; i < words; i += step) out[i] = in[i];
    for (size_t i = words * sizeof(W) + first; i < bytes; i += step) dst[i] = src[i];
}

extern "C" __global__ void copy_nc_w1(int8_t* __restrict__ d, const int8_t* __restrict__ s, size_t b) { copy_as<uint8_t>(d, s, b); }
extern "C" __global__ void copy_nc_w2(int8_t* __restrict__ d, const int8_t* __restrict__ s, size_t b) { copy_as<uint16_t>(d, s, b); }
extern "C" __global__ void copy_nc_w4(int8_t* __restrict__ d, const int8_t* __restrict__ s, size_t b) { copy_as<uint32_t>(d, s, b); }
extern "C" __global__ void copy_nc_w8(int8_t* __restrict__ d, const int8_t* __restrict__ s, size_t b) { copy_as<uint64_t>(d, s, b); }
extern "C" __global__ void copy_nc_w16(int8_t* __restrict__ d, const int8_t* __restrict__ s, size_t b) { copy_as<uint4>(d, s, b); }
