// Warp-level primitives: shuffles (all modes), votes, ballot, match, lane masks, clocks.
__global__ void warp_ops(const int* in, int* out, unsigned long long* times)
{
    long long t0 = clock64();
    int lane = threadIdx.x & 31;
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    int x = __shfl_xor_sync(0xffffffff, v, 1);
    x += __shfl_up_sync(0xffffffff, v, 2);
    x += __shfl_sync(0xffffffff, v, 0);
    unsigned b = __ballot_sync(0xffffffff, v > 0);
    int all = __all_sync(0xffffffff, v > 0);
    int any = __any_sync(0xffffffff, v < 0);
    unsigned act = __activemask();
    int pc = __popc(b) + __clz(v) + __ffs(v) + __match_any_sync(0xffffffff, v) + __reduce_add_sync(0xffffffff, v);
    if (lane == 0) {
        out[blockIdx.x * 4 + 0] = x + pc;
        out[blockIdx.x * 4 + 1] = all + any;
        out[blockIdx.x * 4 + 2] = act;
    }
    unsigned uv = (unsigned)v;
    out[blockIdx.x * blockDim.x + threadIdx.x + 1024] = __brev(uv) ^ __byte_perm(uv, x, 0x3210);
    times[blockIdx.x * blockDim.x + threadIdx.x] = clock64() - t0;
}
