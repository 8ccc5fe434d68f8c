// Warp and block votes, as the CUDA samples' simpleVoteIntrinsics exercises them: per warp __any_sync,
// __all_sync and __ballot_sync of a predicate; per block __syncthreads_count / _and / _or (bar.red).
// Written for gpusim's conformance corpus.
extern "C" __global__ void warp_votes(const int *in, unsigned *ballots, int *any, int *all, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int predicate = i < n && in[i] > 0;
    unsigned b = __ballot_sync(0xffffffffu, predicate);
    int a = __any_sync(0xffffffffu, predicate), l = __all_sync(0xffffffffu, predicate);
    if (threadIdx.x % 32 == 0) {
        unsigned warp = i / 32;
        ballots[warp] = b;
        any[warp] = a;
        all[warp] = l;
    }
}

extern "C" __global__ void block_votes(const int *in, int *counts, int *ands, int *ors, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int predicate = i < n && in[i] > 0;
    int count = __syncthreads_count(predicate);
    int every = __syncthreads_and(predicate);
    int some = __syncthreads_or(predicate);
    if (threadIdx.x == 0) {
        counts[blockIdx.x] = count;
        ands[blockIdx.x] = every;
        ors[blockIdx.x] = some;
    }
}
