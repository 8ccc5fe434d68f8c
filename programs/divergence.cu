// divergence: even and odd lanes of every warp take different branches, and the even
// lanes run a loop whose trip count (x & 15) depends on the data, so a warp runs both
// paths one after the other and waits for its slowest even lane.
extern "C" __global__ void divergence(const int* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int x = in[i];
    float value;
    if ((threadIdx.x & 1) == 0) {
        value = (float)x;
        int trips = x & 15;
#pragma unroll 1
        for (int t = 0; t < trips; ++t) {
            value = value * 0.5f + 1.0f;
        }
    } else {
        value = (float)(3 * x + 7);
    }
    out[i] = value;
}
