// flops_per_byte: arithmetic intensity as a launch parameter. Each thread loads one
// float (4 bytes), runs `flops_per_byte` iterations of four independent FMAs (8 flops,
// four accumulators so the FMA pipe never waits on one dependency chain) and stores one
// float (4 bytes): flops_per_byte flops per byte of DRAM traffic, plus four adds per
// thread to combine the accumulators with x (which also keeps the load when the loop
// runs zero times). Sweep it to walk a kernel across the roofline from memory-bound to
// compute-bound.
extern "C" __global__ void flops_per_byte(const float* in, float* out, int n, int flops_per_byte)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float x = in[i];
    float acc0 = 0.0f;
    float acc1 = 1.0f;
    float acc2 = 2.0f;
    float acc3 = 3.0f;
#pragma unroll 1
    for (int iteration = 0; iteration < flops_per_byte; ++iteration) {
        acc0 = acc0 * 0.5f + x;
        acc1 = acc1 * 0.5f + x;
        acc2 = acc2 * 0.5f + x;
        acc3 = acc3 * 0.5f + x;
    }
    out[i] = ((acc0 + acc1) + (acc2 + acc3)) + x;
}
