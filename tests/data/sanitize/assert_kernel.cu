// A device assert() (nvcc emits a call of __assertfail when the condition fails): tests/test_sanitizers.py.
#include <cassert>

__global__ void check_positive(const int *values, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        assert(values[i] >= 0);
        out[i] = values[i] * 2;
    }
}
