// k-means assignment step: each point (features stored feature-major, as Rodinia's kmeans transposes
// them) goes to the nearest cluster centre by squared Euclidean distance; the number of points whose
// membership changed is counted with a block reduction and one atomicAdd per block.
// Written for gpusim's conformance corpus.
extern "C" __global__ void kmeans_assign(const float *features, const float *clusters, int *membership,
                                         int *changed, int n_points, int n_clusters, int n_features) {
    __shared__ int block_changes[256];
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int moved = 0;
    if (p < n_points) {
        int best = 0;
        float best_dist = 3.4e38f;
        for (int c = 0; c < n_clusters; ++c) {
            float dist = 0.0f;
            for (int f = 0; f < n_features; ++f) {
                float d = features[f * n_points + p] - clusters[c * n_features + f];
                dist += d * d;
            }
            if (dist < best_dist) { best_dist = dist; best = c; }
        }
        moved = membership[p] != best;
        membership[p] = best;
    }
    block_changes[threadIdx.x] = moved;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) block_changes[threadIdx.x] += block_changes[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0 && block_changes[0]) atomicAdd(changed, block_changes[0]);
}

// k-means update step: per-cluster feature sums and point counts with float and integer global atomics
// (the host divides). Written for gpusim's conformance corpus.
extern "C" __global__ void kmeans_accumulate(const float *features, const int *membership, float *sums,
                                             int *counts, int n_points, int n_features) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n_points) return;
    int c = membership[p];
    atomicAdd(&counts[c], 1);
    for (int f = 0; f < n_features; ++f) atomicAdd(&sums[c * n_features + f], features[f * n_points + p]);
}
