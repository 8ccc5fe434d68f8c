// pointer_chase: one thread follows index = next[index] for `hops` dependent loads and
// times them with clock64(): every load waits for the previous one, so the elapsed
// cycles divided by hops is the load-to-use latency of whichever level of the memory
// hierarchy the chain lives in. Writes the final index and the elapsed cycles.
extern "C" __global__ void pointer_chase(const int* next, int hops, int* final_index,
                                         long long* elapsed_cycles)
{
    int index = 0;
    long long start = clock64();
#pragma unroll 1
    for (int hop = 0; hop < hops; ++hop) {
        index = next[index];
    }
    long long stop = clock64();
    final_index[0] = index;
    elapsed_cycles[0] = stop - start;
}
