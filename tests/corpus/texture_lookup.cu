// Bilinear image resampling through a 2D texture object (linear filter, clamp addressing, unnormalized
// coordinates): each output pixel reads the source at (x * scale + 0.5, y * scale + 0.5).
// Written for gpusim's conformance corpus.
extern "C" __global__ void texture_resample(float *out, cudaTextureObject_t tex, int width, int height, float scale) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    out[y * width + x] = tex2D<float>(tex, x * scale + 0.5f, y * scale + 0.5f);
}
