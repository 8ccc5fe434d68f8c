// A spin lock whose critical section follows the spin loop (the form that livelocks under IPDOM
// reconvergence: the lane that wins the lock waits at the loop's exit for the lanes still spinning).
// Every thread adds one to *counter under the lock and records the value it saw.
extern "C" __global__ void spin_lock(int *lock, int *counter, int *seen)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    int value = *(volatile int *)counter;
    *(volatile int *)counter = value + 1;
    seen[i] = value;
    __threadfence();
    atomicExch(lock, 0);
}

// The same lock, then a full-warp shuffle: the lock leaves the warp's lanes in separate groups, and
// __shfl_xor_sync(0xffffffff) must wait for all of them (lane i reads the count lane i ^ 1 saw).
extern "C" __global__ void spin_lock_then_shuffle(int *lock, int *counter, int *seen, int *partner)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    int value = *(volatile int *)counter;
    *(volatile int *)counter = value + 1;
    __threadfence();
    atomicExch(lock, 0);
    seen[i] = value;
    partner[i] = __shfl_xor_sync(0xffffffffu, value, 1);
}

// The lock, then __syncthreads(): under independent thread scheduling the groups the lock split arrive at
// the block's barrier one after the other, and the warp counts as arrived when its last group does.
extern "C" __global__ void spin_lock_then_barrier(int *lock, int *counter, int *after)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    int value = *(volatile int *)counter;
    *(volatile int *)counter = value + 1;
    __threadfence();
    atomicExch(lock, 0);
    __syncthreads();
    after[i] = *(volatile int *)counter;
}
