// cluster_rank: cooperative_groups' cluster.query_shared_rank (getctarank) on a peer CTA's shared variable,
// mapped with cluster.map_shared_rank (mapa), and on the CTA's own. Written here for tests/test_clusters.py.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void __cluster_dims__(4, 1, 1) rank_of(unsigned* out) {
    __shared__ int x;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned r = cluster.block_rank();
    unsigned n = cluster.num_blocks();
    int* peer = cluster.map_shared_rank(&x, (r + 1) % n);
    out[blockIdx.x * 3 + 0] = cluster.query_shared_rank(peer);
    out[blockIdx.x * 3 + 1] = cluster.query_shared_rank(&x);
    out[blockIdx.x * 3 + 2] = r;
}
