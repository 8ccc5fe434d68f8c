// All-pairs gravitational N-body accelerations (the CUDA samples' nbody algorithm): bodies are float4
// (x, y, z, mass); each block stages a tile of blockDim bodies in shared memory, each thread accumulates
// its body's acceleration over the tile with rsqrtf (rsqrt.approx.f32) and a softening term.
// Written for gpusim's conformance corpus.
__device__ float3 interact(float4 bi, float4 bj, float3 a, float softening2) {
    float3 r = make_float3(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z);
    float dist2 = r.x * r.x + r.y * r.y + r.z * r.z + softening2;
    float inv = rsqrtf(dist2);
    float s = bj.w * inv * inv * inv;
    a.x += r.x * s;
    a.y += r.y * s;
    a.z += r.z * s;
    return a;
}

extern "C" __global__ void nbody_accelerations(const float4 *bodies, float3 *acc, int n, float softening2) {
    extern __shared__ float4 tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = i < n ? bodies[i] : make_float4(0, 0, 0, 0);
    float3 a = make_float3(0, 0, 0);
    for (int start = 0; start < n; start += blockDim.x) {
        int j = start + threadIdx.x;
        tile[threadIdx.x] = j < n ? bodies[j] : make_float4(0, 0, 0, 0);   // mass 0: no force
        __syncthreads();
        for (int k = 0; k < blockDim.x; ++k) a = interact(me, tile[k], a, softening2);
        __syncthreads();
    }
    if (i < n) acc[i] = a;
}
