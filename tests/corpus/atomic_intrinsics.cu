// Every integer atomic on one global array, as the CUDA samples' simpleAtomicIntrinsics exercises them
// (each thread applies each operation once; the results do not depend on the order), plus a float
// atomicMax built from an atomicCAS loop on the value's bits. Written for gpusim's conformance corpus.
extern "C" __global__ void atomic_intrinsics(int *g, unsigned *u) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&g[0], 10);                 // 0: add
    atomicExch(&g[1], tid);               // 1: exchange (some thread's id)
    atomicMax(&g[2], tid);                // 2: max
    atomicMin(&g[3], tid);                // 3: min
    atomicInc(&u[0], 17);                 // u0: increment modulo 18
    atomicDec(&u[1], 137);                // u1: decrement, wrapping to 137
    atomicCAS(&g[4], tid - 1, tid);       // 4: chain of compare-and-swaps (ends at the last id that ran in order)
    atomicSub(&g[5], 10);                 // 5: subtract
    atomicAnd(&g[6], 2 * tid + 7);        // 6: and
    atomicOr(&g[7], 1 << (tid % 32));     // 7: or
    atomicXor(&g[8], tid);                // 8: xor
}

__device__ float atomic_max_float(float *address, float value) {
    int *bits = (int *)address;
    int old = *bits, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= value) break;
        old = atomicCAS(bits, assumed, __float_as_int(value));
    } while (old != assumed);
    return __int_as_float(old);
}

extern "C" __global__ void float_atomic_max(const float *in, float *result, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_max_float(result, in[i]);
}
