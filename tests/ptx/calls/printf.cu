// Device printf: gpusim formats vprintf's records after the launch (tests/test_printf.py).
#include <cstdio>

__device__ const char greeting[] = "hello";

extern "C" __global__ void k_hello() { printf("block %d thread %d\n", blockIdx.x, threadIdx.x); }

// every conversion, flag, width, precision and length modifier of the supported subset
extern "C" __global__ void k_formats(const int *i32, const long long *i64, const float *f32, const double *f64,
                                     const char *text) {
    int t = threadIdx.x;
    int a = i32[t];
    long long q = i64[t];
    float f = f32[t];
    double d = f64[t];
    printf("d=%d i=%i u=%u x=%x X=%X o=%o\n", a, a, a, a, a, a);
    printf("w=[%8d] l=[%-8d] z=[%08d] p=[%+d] s=[% d] h=[%hd] hh=[%hhd] hu=[%hu]\n", a, a, a, a, a, a, a, a);
    printf("ld=%ld lld=%lld llu=%llu llx=%llx zu=%zu #x=%#x #o=%#o .5d=%.5d\n", q, q, q, q, (size_t)q, a, a, a);
    printf("f=%f F=%F e=%e E=%E g=%g G=%G .3f=%.3f 12.4e=[%12.4e] -10.2f=[%-10.2f] #g=%#g +f=%+f\n",
           f, f, d, d, d, d, d, d, d, d, f);
    printf("c=%c s=%s .3s=%.3s 8s=[%8s] -8s=[%-8s] pct=%% star=[%*d] p=%p\n", 'A' + t, text, text, greeting,
           greeting, 6, a, (void *)0x1234);
}

// printf in divergent code and in a loop: the order is block, warp, then each warp's printf calls in
// the order the warp executed them, its lanes in lane order
extern "C" __global__ void k_order(int n) {
    int t = threadIdx.x;
    if (t & 1)
        printf("odd %d\n", t);
    else
        printf("even %d\n", t);
    for (int k = 0; k < n; ++k) printf("t%d k%d\n", t, k);
}

// a kernel that returns vprintf's value (the number of conversions) into memory
extern "C" __global__ void k_count(int *out) { out[threadIdx.x] = printf("%d %d %s\n", 1, 2, "x"); }
