// Thermal simulation step (the HotSpot model): each cell's temperature moves by its power and its
// conductance to its four neighbours (edges clamp to the cell itself) and to the ambient. 16 x 16
// tiles with a one-cell halo in shared memory. Written for gpusim's conformance corpus.
#define BS 16
extern "C" __global__ void hotspot_step(const float *power, const float *temp, float *out, int rows, int cols,
                                        float step_div_cap, float rx_1, float ry_1, float rz_1, float amb) {
    __shared__ float t[BS + 2][BS + 2];
    int tx = threadIdx.x, ty = threadIdx.y;
    int c = blockIdx.x * BS + tx, r = blockIdx.y * BS + ty;
    int cc = min(c, cols - 1), rc = min(r, rows - 1);
    t[ty + 1][tx + 1] = temp[rc * cols + cc];
    if (tx == 0) t[ty + 1][0] = temp[rc * cols + max(cc - 1, 0)];
    if (tx == BS - 1 || c == cols - 1) t[ty + 1][tx + 2] = temp[rc * cols + min(cc + 1, cols - 1)];
    if (ty == 0) t[0][tx + 1] = temp[max(rc - 1, 0) * cols + cc];
    if (ty == BS - 1 || r == rows - 1) t[ty + 2][tx + 1] = temp[min(rc + 1, rows - 1) * cols + cc];
    __syncthreads();
    if (r >= rows || c >= cols) return;
    float center = t[ty + 1][tx + 1];
    float delta = step_div_cap * (power[r * cols + c] +
                                  (t[ty + 2][tx + 1] + t[ty][tx + 1] - 2.0f * center) * ry_1 +
                                  (t[ty + 1][tx + 2] + t[ty + 1][tx] - 2.0f * center) * rx_1 +
                                  (amb - center) * rz_1);
    out[r * cols + c] = center + delta;
}
