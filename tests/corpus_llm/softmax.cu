// Softmax over rows with the online normaliser (Milakov and Gimelshein 2018): one pass keeps the running
// maximum and the sum of exponentials rescaled to it, a second pass writes exp(x - max) / sum. One warp per
// row; lanes merge their (max, sum) pairs with shuffles. Written here from the algorithm.
extern "C" __global__ void online_softmax(float *out, const float *inp, int N, int C) {
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= N) return;
    const float *x = inp + (long)row * C;
    float maxval = -INFINITY, sumval = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float v = x[i];
        if (v > maxval) {
            sumval *= expf(maxval - v);
            maxval = v;
        }
        sumval += expf(v - maxval);
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        float other_max = __shfl_xor_sync(0xffffffff, maxval, offset);
        float other_sum = __shfl_xor_sync(0xffffffff, sumval, offset);
        float m = fmaxf(maxval, other_max);
        sumval = sumval * expf(maxval - m) + other_sum * expf(other_max - m);
        maxval = m;
    }
    float inv = 1.0f / sumval;
    for (int i = lane; i < C; i += 32) out[(long)row * C + i] = expf(x[i] - maxval) * inv;
}

// cross-entropy forward: losses[i] = -log(probs[i, targets[i]]) over N rows of V probabilities
extern "C" __global__ void crossentropy_forward(float *losses, const float *probs, const int *targets, int N,
                                                int V) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) losses[i] = -logf(probs[(long)i * V + targets[i]]);
}
