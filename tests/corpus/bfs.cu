// Breadth-first search over a CSR graph, two ways. bfs_expand/bfs_update: the level-synchronous mask
// form (a frontier mask, a next mask, a visited mask, bytes; a flag says whether anything changed).
// bfs_frontier: a queue of frontier vertices; a neighbour is claimed with atomicCAS on its distance and
// appended to the next queue with atomicAdd. Written for gpusim's conformance corpus.
extern "C" __global__ void bfs_expand(const int *row_start, const int *edges, unsigned char *frontier,
                                      unsigned char *next, const unsigned char *visited, int *cost, int n) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || !frontier[v]) return;
    frontier[v] = 0;
    for (int e = row_start[v]; e < row_start[v + 1]; ++e) {
        int u = edges[e];
        if (!visited[u]) { cost[u] = cost[v] + 1; next[u] = 1; }
    }
}

extern "C" __global__ void bfs_update(unsigned char *frontier, unsigned char *next, unsigned char *visited,
                                      int *changed, int n) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || !next[v]) return;
    frontier[v] = 1;
    visited[v] = 1;
    next[v] = 0;
    *changed = 1;
}

extern "C" __global__ void bfs_frontier(const int *row_start, const int *edges, const int *in_queue, int in_size,
                                        int *out_queue, int *out_size, int *dist, int level) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= in_size) return;
    int v = in_queue[t];
    for (int e = row_start[v]; e < row_start[v + 1]; ++e) {
        int u = edges[e];
        if (atomicCAS(&dist[u], -1, level + 1) == -1) out_queue[atomicAdd(out_size, 1)] = u;
    }
}
