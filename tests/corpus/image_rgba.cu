// 8-bit RGBA image kernels as image-processing samples write them, one pixel (uchar4) per thread:
// luma (BT.601 integer weights, (77 R + 150 G + 29 B + 128) >> 8) and a colour inversion that keeps alpha,
// stored back as uchar4 (ld/st.global.v4.u8). Written for gpusim's conformance corpus.
extern "C" __global__ void rgba_luma(const uchar4 *rgba, unsigned char *luma, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uchar4 p = rgba[i];
    luma[i] = (unsigned char)((77u * p.x + 150u * p.y + 29u * p.z + 128u) >> 8);
}

extern "C" __global__ void rgba_invert(const uchar4 *in, uchar4 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uchar4 p = in[i];
    out[i] = make_uchar4(255 - p.x, 255 - p.y, 255 - p.z, p.w);
}
