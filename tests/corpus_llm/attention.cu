// Causal self-attention with the online softmax (the FlashAttention recurrence, Dao et al. 2022): one warp
// per (batch, head, query) row, lane d holding output dimension d (head size 32). For each key j <= the
// query's position: the score q.k / sqrt(32) by a warp reduction, the running maximum, the running sum
// rescaled to it, and the output accumulator rescaled and updated with p * v[j]. Written from the algorithm.
#define HS 32

extern "C" __global__ void __launch_bounds__(256)
causal_attention(float *out, const float *q, const float *k, const float *v, int B, int T, int NH) {
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;     // (b, h, t) flattened
    if (row >= B * NH * T) return;
    int t = row % T;
    int bh = row / T;
    const float *qrow = q + (long)row * HS;
    const float *kbase = k + (long)bh * T * HS, *vbase = v + (long)bh * T * HS;
    float qd = qrow[lane] * rsqrtf((float)HS);
    float maxval = -INFINITY, sumval = 0.0f, acc = 0.0f;
    for (int j = 0; j <= t; j++) {
        float s = qd * kbase[(long)j * HS + lane];
        for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffff, s, offset);
        float m = fmaxf(maxval, s);
        float scale = expf(maxval - m), p = expf(s - m);
        sumval = sumval * scale + p;
        acc = acc * scale + p * vbase[(long)j * HS + lane];
        maxval = m;
    }
    out[(long)row * HS + lane] = acc / sumval;
}
