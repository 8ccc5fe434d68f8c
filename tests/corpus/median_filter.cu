// 3 x 3 median filter: each thread copies its neighbourhood (clamped at the borders) into a 9-element
// per-thread array and partially sorts it (insertion sort with a dynamic index, so the array lives in
// local memory). Written for gpusim's conformance corpus.
extern "C" __global__ void median3x3(const float *src, float *dst, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float window[9];
    int count = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            int sx = min(max(x + dx, 0), width - 1), sy = min(max(y + dy, 0), height - 1);
            window[count++] = src[sy * width + sx];
        }
    for (int i = 1; i < 9; ++i) {
        float key = window[i];
        int j = i - 1;
        while (j >= 0 && window[j] > key) { window[j + 1] = window[j]; --j; }
        window[j + 1] = key;
    }
    dst[y * width + x] = window[4];
}
