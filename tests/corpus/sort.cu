// Sorting networks and merges. bitonic_sort and odd_even_merge_sort sort 2 * blockDim keys per block
// in shared memory (one comparator per thread per step); merge_pass merges neighbouring sorted runs of
// `width` keys in global memory, each thread placing one key at its rank (binary search in the other
// run), so log2(n) launches sort n keys. Written for gpusim's conformance corpus.
__device__ __forceinline__ void compare_exchange(unsigned *keys, unsigned a, unsigned b, bool ascending) {
    unsigned ka = keys[a], kb = keys[b];
    if ((ka > kb) == ascending) { keys[a] = kb; keys[b] = ka; }
}

extern "C" __global__ void bitonic_sort(unsigned *data) {
    extern __shared__ unsigned keys[];
    unsigned t = threadIdx.x, n = 2 * blockDim.x;
    unsigned *base = data + blockIdx.x * n;
    keys[t] = base[t];
    keys[t + blockDim.x] = base[t + blockDim.x];
    for (unsigned size = 2; size <= n; size <<= 1) {
        for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            unsigned pos = 2 * t - (t & (stride - 1));
            compare_exchange(keys, pos, pos + stride, (pos & size) == 0);
        }
    }
    __syncthreads();
    base[t] = keys[t];
    base[t + blockDim.x] = keys[t + blockDim.x];
}

// Batcher's odd-even merge sort: for merge size 2p and distance k, element x = (k mod p) + 2k*m + i
// (i < k) is compared with x + k when both lie in the same block of 2p elements.
extern "C" __global__ void odd_even_merge_sort(unsigned *data) {
    extern __shared__ unsigned keys[];
    unsigned t = threadIdx.x, n = 2 * blockDim.x;
    unsigned *base = data + blockIdx.x * n;
    keys[t] = base[t];
    keys[t + blockDim.x] = base[t + blockDim.x];
    for (unsigned p = 1; p < n; p <<= 1) {
        for (unsigned k = p; k >= 1; k >>= 1) {
            __syncthreads();
            unsigned m = t / k, i = t % k;
            unsigned x = (k % p) + 2 * k * m + i;
            if (x + k < n && x / (2 * p) == (x + k) / (2 * p)) compare_exchange(keys, x, x + k, true);
        }
    }
    __syncthreads();
    base[t] = keys[t];
    base[t + blockDim.x] = keys[t + blockDim.x];
}

// Number of keys in run[0:len] below key (strictly below, or not above when `inclusive`).
__device__ unsigned rank_in(const unsigned *run, unsigned len, unsigned key, bool inclusive) {
    unsigned lo = 0, hi = len;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        bool left = inclusive ? run[mid] <= key : run[mid] < key;
        if (left) lo = mid + 1; else hi = mid;
    }
    return lo;
}

extern "C" __global__ void merge_pass(const unsigned *in, unsigned *out, unsigned n, unsigned width) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned pair = i / (2 * width) * (2 * width);
    unsigned a_len = min(width, n - pair);
    unsigned b_start = pair + a_len;
    unsigned b_len = min(width, n - b_start);
    unsigned key = in[i];
    unsigned pos;
    if (i < b_start) pos = (i - pair) + rank_in(in + b_start, b_len, key, false);   // A before equal B
    else pos = (i - b_start) + rank_in(in + pair, a_len, key, true);
    out[pair + pos] = key;
}
