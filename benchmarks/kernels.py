"""Kernels used by the benchmarks, as PTX text (what nvcc -O3 emits for these loops, trimmed)."""

FFMA_LOOP = r"""
.version 7.0
.target sm_80
.address_size 64
// four independent FFMA chains per thread, `n` iterations: ALU-bound
.visible .entry ffma_loop(.param .u64 out, .param .u32 n)
{
 .reg .pred %p<2>; .reg .b32 %r<8>; .reg .f32 %f<8>; .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out];
 ld.param.u32 %r1, [n];
 mov.u32 %r2, %tid.x;
 cvt.rn.f32.u32 %f1, %r2;
 mov.f32 %f2, %f1; mov.f32 %f3, %f1; mov.f32 %f4, %f1;
 mov.u32 %r3, 0;
$L_loop:
 fma.rn.f32 %f1, %f1, 0f3F7FFFFF, 0f3F800000;
 fma.rn.f32 %f2, %f2, 0f3F7FFFFF, 0f3F800000;
 fma.rn.f32 %f3, %f3, 0f3F7FFFFF, 0f3F800000;
 fma.rn.f32 %f4, %f4, 0f3F7FFFFF, 0f3F800000;
 add.s32 %r3, %r3, 1;
 setp.lt.u32 %p1, %r3, %r1;
 @%p1 bra $L_loop;
 add.f32 %f5, %f1, %f2; add.f32 %f6, %f3, %f4; add.f32 %f7, %f5, %f6;
 mov.u32 %r4, %ctaid.x; mov.u32 %r5, %ntid.x; mad.lo.s32 %r6, %r4, %r5, %r2;
 cvta.to.global.u64 %rd2, %rd1;
 mul.wide.u32 %rd3, %r6, 4; add.s64 %rd2, %rd2, %rd3;
 st.global.f32 [%rd2], %f7;
 ret;
}
"""

STREAM_COPY = r"""
.version 7.0
.target sm_80
.address_size 64
// grid-stride copy of n floats: memory-bound
.visible .entry stream_copy(.param .u64 src, .param .u64 dst, .param .u32 n)
{
 .reg .pred %p<2>; .reg .b32 %r<8>; .reg .f32 %f<2>; .reg .b64 %rd<8>;
 ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [dst]; ld.param.u32 %r1, [n];
 cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
 mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
 mad.lo.s32 %r5, %r2, %r3, %r4;
 mov.u32 %r6, %nctaid.x; mul.lo.s32 %r7, %r6, %r3;
 setp.ge.u32 %p1, %r5, %r1;
 @%p1 bra $L_done;
$L_loop:
 mul.wide.u32 %rd3, %r5, 4;
 add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
 ld.global.f32 %f1, [%rd4];
 st.global.f32 [%rd5], %f1;
 add.s32 %r5, %r5, %r7;
 setp.lt.u32 %p1, %r5, %r1;
 @%p1 bra $L_loop;
$L_done:
 ret;
}
"""
