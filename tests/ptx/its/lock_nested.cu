// Harder lock patterns: the lock taken inside a branch only some lanes take, then a full-warp shuffle after
// the branch's join; and every thread taking the lock several times in a loop.
extern "C" __global__ void lock_in_branch(int *lock, int *counter, int *seen, int *partner)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int value = -1;
    if (threadIdx.x % 3 == 0) {
        while (atomicCAS(lock, 0, 1) != 0) {
        }
        value = *(volatile int *)counter;
        *(volatile int *)counter = value + 1;
        __threadfence();
        atomicExch(lock, 0);
    }
    seen[i] = value;
    partner[i] = __shfl_down_sync(0xffffffffu, value, 1);
}

extern "C" __global__ void lock_repeatedly(int *lock, int *counter, int *last, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int mine = 0;
    for (int r = 0; r < rounds; r++) {
        while (atomicCAS(lock, 0, 1) != 0) {
        }
        int value = *(volatile int *)counter;
        *(volatile int *)counter = value + 1;
        mine += value;
        __threadfence();
        atomicExch(lock, 0);
    }
    last[i] = mine;
}
