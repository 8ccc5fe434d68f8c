// By-value struct and array parameters, as nvcc lays them out (tests/test_aggregate_params.py).
struct Empty {};
struct __align__(16) Vec4 { float x, y, z, w; };
struct Mixed { int n; double scale; char tag; };
struct Table { short entries[5]; };

extern "C" __global__ void with_empty(Empty e, float *out) { out[threadIdx.x] = 1.0f + threadIdx.x; }

extern "C" __global__ void with_vec4(Vec4 v, float *out) {
    out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
}

extern "C" __global__ void with_mixed(Mixed m, double *out) {
    out[0] = m.n; out[1] = m.scale; out[2] = m.tag;
}

extern "C" __global__ void with_table(Table t, int *out) {
    if (threadIdx.x < 5) out[threadIdx.x] = t.entries[threadIdx.x];
}
