// Back-propagation in a two-layer network, as Rodinia's backprop: the forward pass of the input layer
// (16 x 16 blocks: a block multiplies 16 inputs by their 16 x hidden weights and reduces the 16 rows in
// shared memory, one partial sum per (block, hidden unit)), and the weight adjustment with momentum.
// Written for gpusim's conformance corpus.
#define HB 16
extern "C" __global__ void layer_forward(const float *input, const float *weights, float *partial, int hidden) {
    __shared__ float in_tile[HB];
    __shared__ float w[HB][HB];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * HB + ty;                    // input unit
    if (tx == 0) in_tile[ty] = input[row];
    __syncthreads();
    w[ty][tx] = weights[row * hidden + tx] * in_tile[ty];
    __syncthreads();
    for (int s = HB / 2; s > 0; s >>= 1) {
        if (ty < s) w[ty][tx] += w[ty + s][tx];
        __syncthreads();
    }
    if (ty == 0) partial[blockIdx.y * hidden + tx] = w[0][tx];
}

extern "C" __global__ void adjust_weights(const float *delta, int hidden, const float *layer, int n_in,
                                          float *weights, float *old_change, float eta, float momentum) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (j >= hidden || i >= n_in) return;
    int k = i * hidden + j;
    float change = eta * delta[j] * layer[i] + momentum * old_change[k];
    weights[k] += change;
    old_change[k] = change;
}
