// European call on a Cox-Ross-Rubinstein binomial tree, one option per block: the leaves (one per
// thread, steps = blockDim - 1) are priced at expiry, then the tree is folded back one level per step in
// shared memory. Written for gpusim's conformance corpus.
extern "C" __global__ void binomial_options(float *price, const float *S, const float *X, float T,
                                            float r, float v) {
    extern __shared__ float node[];
    int i = threadIdx.x, steps = blockDim.x - 1;
    float s = S[blockIdx.x], x = X[blockIdx.x];
    float dt = T / steps;
    float vdt = v * sqrtf(dt);
    float discount = expf(-r * dt);
    float up = expf(vdt), down = 1.0f / up;
    float pu = (expf(r * dt) - down) / (up - down);
    float pu_df = pu * discount, pd_df = (1.0f - pu) * discount;
    node[i] = fmaxf(s * expf(vdt * (2.0f * i - steps)) - x, 0.0f);
    for (int level = steps; level > 0; --level) {
        __syncthreads();
        float value = 0.0f;
        if (i < level) value = pu_df * node[i + 1] + pd_df * node[i];
        __syncthreads();
        if (i < level) node[i] = value;
    }
    if (i == 0) price[blockIdx.x] = node[0];
}
