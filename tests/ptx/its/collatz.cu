// Collatz step counts: a data-dependent loop in which every lane runs its own number of iterations (a
// divergent loop with no communication between threads).
extern "C" __global__ void collatz(const unsigned *start, int *steps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    unsigned x = start[i];
    int count = 0;
    while (x != 1) {
        x = (x & 1) ? 3 * x + 1 : x / 2;
        count++;
    }
    steps[i] = count;
}
