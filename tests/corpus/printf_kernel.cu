// Device printf: every thread of the first block prints its index, a scaled float and a hex word.
// Written for gpusim's conformance corpus.
#include <cstdio>
extern "C" __global__ void print_values(const float *values, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) printf("thread %d value %.3f bits %08x\n", i, values[i] * 2.0f, __float_as_uint(values[i]));
}
