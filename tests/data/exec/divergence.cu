// Divergence and reconvergence: nested branches, data-dependent loops, early exit before a barrier,
// a loop with break and continue. Compiled with nvcc -O3 (see regenerate.sh).

__global__ void nested_branches(const int* in, int* out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[t];
    int r;
    if (v & 1) {
        if (v & 2) {
            r = v * 3;
        } else {
            r = v - 100;
        }
    } else {
        if (v % 5 == 0) {
            r = v / 5;
            if (v > 50) r += 1000;
        } else {
            r = -v;
        }
    }
    out[t] = r + 1;
}

// Collatz steps: every lane runs a different number of iterations.
__global__ void divergent_loop(const unsigned* in, unsigned* steps, unsigned* peak)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = in[t];
    unsigned count = 0, top = x;
    while (x > 1) {
        x = (x & 1) ? 3 * x + 1 : x / 2;
        top = x > top ? x : top;
        count++;
    }
    steps[t] = count;
    peak[t] = top;
}

// Some lanes (and one whole warp) leave before a barrier; the rest still synchronize and exchange.
__global__ void early_exit_barrier(const int* in, int* out)
{
    __shared__ int buffer[256];
    int t = threadIdx.x;
    buffer[t] = -1;
    __syncthreads();
    if (in[blockIdx.x * blockDim.x + t] < 0) return;
    buffer[t] = in[blockIdx.x * blockDim.x + t] * 2;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = buffer[(t + 1) % blockDim.x];
}

// A loop with continue and break whose trip count depends on the data.
__global__ void break_continue(const int* in, int* out, int n, int limit)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int acc = 0;
    for (int i = 0; i < n; i++) {
        int v = in[(t + i) % n];
        if (v % 3 == 0) continue;
        if (acc + v > limit) break;
        acc += v;
    }
    out[t] = acc;
}
