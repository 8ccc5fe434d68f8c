// Thread-block cluster test kernels for tests/test_clusters.py (nvcc -ptx -O3 -arch=sm_90a; regenerate.sh).
#include <cooperative_groups.h>
extern "C" {
namespace cg = cooperative_groups;

// Every thread writes its cluster special registers (11 words per thread).
__global__ void cluster_ids(unsigned *out) {
    unsigned v[11];
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(v[0]));
    asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(v[1]));
    asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(v[2]));
    asm volatile("mov.u32 %0, %%nclusterid.y;" : "=r"(v[3]));
    asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(v[4]));
    asm volatile("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(v[5]));
    asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(v[6]));
    asm volatile("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(v[7]));
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(v[8]));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(v[9]));
    asm volatile("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(v[10]));
    unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned t = block * blockDim.x + threadIdx.x;
    for (int i = 0; i < 11; i++) out[t * 11 + i] = v[i];
}

// Placement: each block records its %smid and the clock when it started and ended.
__global__ void cluster_where(unsigned *smid, long long *start, long long *end) {
    cg::cluster_group cluster = cg::this_cluster();
    unsigned block = blockIdx.x + gridDim.x * blockIdx.y;
    long long t0 = clock64();
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    cluster.sync();
    if (threadIdx.x == 0) { smid[block] = s; start[block] = t0; end[block] = clock64(); }
}

// DSM reduction: each block puts its slice's partial sums in shared memory; rank 0 sums every rank's words
// through map_shared_rank.
__global__ void dsm_reduce(const float *in, float *out) {
    __shared__ float part[128];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = in[i] * 2.0f;
    cluster.sync();
    if (cluster.block_rank() == 0) {
        float sum = 0.0f;
        for (unsigned r = 0; r < cluster.num_blocks(); r++) {
            float *remote = cluster.map_shared_rank(part, r);
            sum += remote[threadIdx.x];
        }
        out[blockIdx.x / cluster.num_blocks() * blockDim.x + threadIdx.x] = sum;
    }
    cluster.sync();
}

// Ring exchange: every block writes its rank into the next rank's shared memory (st.shared::cluster), then
// reads what its predecessor wrote; atomics on rank 0's counter (atom.shared::cluster).
__global__ void dsm_ring(unsigned *out) {
    __shared__ unsigned box[64];
    __shared__ unsigned counter;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), n = cluster.num_blocks();
    if (threadIdx.x == 0) counter = 0;
    cluster.sync();
    unsigned *next = cluster.map_shared_rank(box, (rank + 1) % n);
    next[threadIdx.x] = rank * 1000 + threadIdx.x;
    unsigned *c0 = cluster.map_shared_rank(&counter, 0);
    atomicAdd(c0, rank + 1);
    cluster.sync();
    unsigned block = blockIdx.x;
    out[block * blockDim.x + threadIdx.x] = box[threadIdx.x];
    if (rank == 0 && threadIdx.x == 0) out[gridDim.x * blockDim.x + block / n] = counter;
    cluster.sync();
}

// barrier.cluster ordering: rank 1 writes a flag into rank 0's shared memory before arriving; rank 0 reads it
// after its wait (split arrive/wait in inline asm).
__global__ void cluster_order(unsigned *out) {
    __shared__ unsigned flag;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    if (threadIdx.x == 0) flag = 0;
    cluster.sync();
    if (rank == 1 && threadIdx.x == 0) {
        for (volatile int k = 0; k < 200; k++) {}
        *cluster.map_shared_rank(&flag, 0) = 77;
    }
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (rank == 0 && threadIdx.x == 0) out[blockIdx.x / 2] = flag;
    cluster.sync();
}

// Remote mbarrier: rank 0 inits an mbarrier expecting one arrival per other rank; the others arrive on it
// remotely (mbarrier.arrive.release.cluster.shared::cluster) after writing their rank into rank 0's slots.
__global__ void remote_mbarrier(unsigned *out) {
    __shared__ unsigned long long bar;
    __shared__ unsigned slots[16];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), n = cluster.num_blocks();
    if (rank == 0 && threadIdx.x == 0) {
        unsigned a = (unsigned)__cvta_generic_to_shared(&bar);
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(a), "r"(n - 1) : "memory");
    }
    cluster.sync();
    if (rank != 0 && threadIdx.x == 0) {
        *cluster.map_shared_rank(&slots[rank], 0) = rank * 10;
        unsigned local = (unsigned)__cvta_generic_to_shared(&bar);
        unsigned remote;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(0));
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "r"(remote) : "memory");
    }
    if (rank == 0 && threadIdx.x == 0) {
        unsigned a = (unsigned)__cvta_generic_to_shared(&bar);
        unsigned done = 0;
        while (!done) {
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(a), "r"(0) : "memory");
        }
        unsigned sum = 0;
        for (unsigned r = 1; r < n; r++) sum += slots[r];
        out[blockIdx.x / n] = sum;
    }
    cluster.sync();
}

// A rank past the cluster (mapa of rank 'bad') and an access to a CTA that has exited.
__global__ void bad_rank(unsigned *out, unsigned bad) {
    __shared__ unsigned x;
    cg::cluster_group cluster = cg::this_cluster();
    x = 1;
    cluster.sync();
    out[blockIdx.x] = *cluster.map_shared_rank(&x, bad);
}

__global__ void after_exit(unsigned *out) {
    __shared__ unsigned x;
    cg::cluster_group cluster = cg::this_cluster();
    x = 5;
    cluster.sync();
    if (cluster.block_rank() == 0) return;
    for (volatile int k = 0; k < 2000; k++) {}
    out[blockIdx.x] = *cluster.map_shared_rank(&x, 0);
}

// Declared cluster shape: runs as clusters of 2 without the launch option.
__global__ void __cluster_dims__(2, 1, 1) fixed_cluster(unsigned *out) {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    out[blockIdx.x] = r;
}

// DSM latency: thread 0 of rank 0 chases a pointer chain in rank 1's shared memory, timing 64 dependent loads.
__global__ void dsm_latency(const unsigned *chain, long long *cycles, unsigned *sink) {
    __shared__ unsigned words[256];
    cg::cluster_group cluster = cg::this_cluster();
    for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) words[i] = chain[i];
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x == 0) {
        unsigned *remote = cluster.map_shared_rank(words, 1);
        unsigned j = 0;
        long long t0 = clock64();
        for (int k = 0; k < 64; k++) j = remote[j];
        long long t1 = clock64();
        cycles[0] = t1 - t0;
        sink[0] = j;
    }
    cluster.sync();
}

// DSM bulk copy: every rank sends its 64 words to the next rank's inbox with
// cp.async.bulk.shared::cluster.shared::cta, completing bytes on the receiver's mbarrier.
__global__ void dsm_bulk(const unsigned *in, unsigned *out) {
    __shared__ alignas(16) unsigned outbox[64];
    __shared__ alignas(16) unsigned inbox[64];
    __shared__ unsigned long long bar;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), n = cluster.num_blocks();
    outbox[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    unsigned bar_a = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_a) : "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 256;" :: "r"(bar_a) : "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    cluster.sync();
    if (threadIdx.x == 0) {
        unsigned next = (rank + 1) % n, dst, mbar;
        unsigned inbox_a = (unsigned)__cvta_generic_to_shared(inbox);
        unsigned src = (unsigned)__cvta_generic_to_shared(outbox);
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(dst) : "r"(inbox_a), "r"(next));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(mbar) : "r"(bar_a), "r"(next));
        asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], 256, [%2];"
                     :: "r"(dst), "r"(src), "r"(mbar) : "memory");
    }
    unsigned done = 0;
    while (!done) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar_a), "r"(0) : "memory");
    }
    out[blockIdx.x * 64 + threadIdx.x] = inbox[threadIdx.x];
    cluster.sync();
}

// Multicast: rank 0 loads 64 words of global memory into the inbox of ranks 0, 1 and 3 (ctaMask 0b1011) with
// one cp.async.bulk...multicast::cluster; rank 2 keeps its sentinel.
__global__ void multicast_load(const unsigned *in, unsigned *out) {
    __shared__ alignas(16) unsigned inbox[64];
    __shared__ unsigned long long bar;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    const unsigned short cta_mask = 0xB;
    bool receives = (cta_mask >> rank) & 1;
    inbox[threadIdx.x] = 0xFFFFFFFFu;
    unsigned bar_a = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0 && receives) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_a) : "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 256;" :: "r"(bar_a) : "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    cluster.sync();
    if (rank == 0 && threadIdx.x == 0) {
        unsigned dst = (unsigned)__cvta_generic_to_shared(inbox);
        const unsigned *src = in + (blockIdx.x / cluster.num_blocks()) * 64;
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                     " [%0], [%1], 256, [%2], %3;" :: "r"(dst), "l"(src), "r"(bar_a), "h"(cta_mask) : "memory");
    }
    if (receives) {
        unsigned done = 0;
        while (!done) {
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(bar_a), "r"(0) : "memory");
        }
    }
    out[blockIdx.x * 64 + threadIdx.x] = inbox[threadIdx.x];
    cluster.sync();
}

// DSM throughput: all 1024 threads of rank 0 read 16 words each from rank 1's shared memory (64 KiB), timed
// with %clock64 around the loads and a block barrier.
__global__ void dsm_stream(long long *cycles, unsigned *sink) {
    __shared__ unsigned words[1024];
    cg::cluster_group cluster = cg::this_cluster();
    words[threadIdx.x] = threadIdx.x;
    cluster.sync();
    unsigned s = 0;
    long long t0 = clock64();
    if (cluster.block_rank() == 0) {
        unsigned *remote = cluster.map_shared_rank(words, 1);
#pragma unroll
        for (int k = 0; k < 16; k++) s += remote[(threadIdx.x + k * 32) % 1024];
    }
    __syncthreads();
    long long t1 = clock64();
    if (cluster.block_rank() == 0 && threadIdx.x == 0) cycles[0] = t1 - t0;
    sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
    cluster.sync();
}
}  // extern "C"
