// Fixture of tests/test_bar_arrive.py; regenerate: nvcc -ptx -O3 -arch=sm_80 bar_arrive.cu -o bar_arrive.ptx (CUDA 13.0)
// warp 0 writes a shared word and arrives on barrier 1 (64 threads); warp 1 runs `chain` dependent FFMAs, waits on
// barrier 1 and reads the word. out[0], out[1]: cycles from start to after the barrier for warp 0 / 1; out[2]: word.
extern "C" __global__ void arrive_probe(long long* out, int chain, float x) {
    __shared__ int word;
    const long long start = clock64();
    if (threadIdx.x < 32) {
        if (threadIdx.x == 0) word = 42;
        asm volatile("bar.arrive 1, 64;\n" ::: "memory");
        const long long after = clock64();
        if (threadIdx.x == 0) out[0] = after - start;
    } else {
        float y = x;
        for (int i = 0; i < chain; ++i) y = fmaf(y, 1.0001f, 0.5f);
        if (y == 12345.0f) out[3] = 1;
        asm volatile("bar.sync 1, 64;\n" ::: "memory");
        const long long after = clock64();
        if (threadIdx.x == 32) { out[1] = after - start; out[2] = word; }
    }
}

// ping-pong: two warps take `rounds` turns appending to a shared log; warp t waits on barrier 1 + t, appends its
// id, then arrives on the other warp's barrier. out[i] = the log.
extern "C" __global__ void arrive_pingpong(int* out, int rounds) {
    __shared__ int log[256];
    __shared__ int n;
    const int t = threadIdx.x / 32;
    if (threadIdx.x == 0) n = 0;
    __syncthreads();
    if (t == 1) asm volatile("bar.arrive 1, 64;\n" ::: "memory");     // warp 0 goes first
    for (int r = 0; r < rounds; ++r) {
        asm volatile("bar.sync %0, 64;\n" :: "r"(1 + t) : "memory");
        if (threadIdx.x % 32 == 0) log[n++] = t;
        __threadfence_block();
        asm volatile("bar.arrive %0, 64;\n" :: "r"(2 - t) : "memory");
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 2 * rounds; i += blockDim.x) out[i] = log[i];
}
