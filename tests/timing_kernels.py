"""Hand-written PTX microbenchmarks for the timing known-answer tests.

Each kernel isolates one latency or throughput so that the expected cycle
count can be written as a formula over config fields.
"""


def dependent_ffma(count: int) -> str:
    """One straight-line chain of ``count`` dependent FFMAs (no loop, no memory)."""
    body = "\n".join(" fma.rn.f32 %f1, %f1, %f2, %f2;" for _ in range(count))
    return f"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry chain(.param .u64 out)
{{
 .reg .f32 %f<3>; .reg .b64 %rd<2>;
 mov.f32 %f1, 0f3F800000;
 mov.f32 %f2, 0f3F000000;
{body}
 ld.param.u64 %rd1, [out];
 st.global.f32 [%rd1], %f1;
 ret;
}}
"""


POINTER_CHASE = r"""
.version 7.0
.target sm_80
.address_size 64
// one thread follows next = table[next] for `hops` steps; the address of each load depends on the last
.visible .entry chase(.param .u64 table, .param .u64 out, .param .u32 hops)
{
 .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<6>;
 ld.param.u64 %rd1, [table];
 ld.param.u64 %rd5, [out];
 ld.param.u32 %r3, [hops];
 mov.u32 %r1, 0;
 mov.u32 %r2, 0;
$L_hop:
 .pragma "nounroll";
 mul.wide.u32 %rd3, %r1, 4;
 add.s64 %rd4, %rd1, %rd3;
 ld.global.u32 %r1, [%rd4];
 add.s32 %r2, %r2, 1;
 setp.lt.u32 %p1, %r2, %r3;
 @%p1 bra $L_hop;
 st.global.u32 [%rd5], %r1;
 ret;
}
"""


DIVERGE = r"""
.version 7.0
.target sm_80
.address_size 64
// lanes whose bit in `mask_a` (by global thread id) is set run chain A, the others chain B
.visible .entry diverge(.param .u64 out, .param .u32 mask_a, .param .u32 warp_split)
{
 .reg .pred %p<2>; .reg .b32 %r<8>; .reg .f32 %f<3>; .reg .b64 %rd<4>;
 mov.u32 %r1, %tid.x;
 ld.param.u32 %r2, [mask_a];
 ld.param.u32 %r3, [warp_split];
 shr.u32 %r4, %r1, %r3;          // warp_split=5: the warp index decides; 0: the lane decides
 and.b32 %r5, %r4, 31;
 shr.u32 %r6, %r2, %r5;
 and.b32 %r7, %r6, 1;
 setp.eq.u32 %p1, %r7, 1;
 mov.f32 %f1, 0f3F800000;
 mov.f32 %f2, 0f3F000000;
 @%p1 bra $L_a;
CHAIN_B
 bra.uni $L_join;
$L_a:
CHAIN_A
$L_join:
 ld.param.u64 %rd1, [out];
 mul.wide.u32 %rd2, %r1, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.f32 [%rd3], %f1;
 ret;
}
"""


def diverge(chain_length: int) -> str:
    chain = "\n".join(" fma.rn.f32 %f1, %f1, %f2, %f2;" for _ in range(chain_length))
    chain_b = "\n".join(" fma.rn.f32 %f1, %f1, %f1, %f2;" for _ in range(chain_length))
    return DIVERGE.replace("CHAIN_A", chain).replace("CHAIN_B", chain_b)


STRIDED_LOAD = r"""
.version 7.0
.target sm_80
.address_size 64
// thread i loads src[i * stride] and stores it to dst[i]
.visible .entry strided(.param .u64 src, .param .u64 dst, .param .u32 stride)
{
 .reg .b32 %r<6>; .reg .f32 %f<2>; .reg .b64 %rd<8>;
 ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [dst]; ld.param.u32 %r1, [stride];
 mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
 mad.lo.s32 %r5, %r2, %r3, %r4;
 mul.lo.s32 %r1, %r5, %r1;
 mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd1, %rd3;
 ld.global.f32 %f1, [%rd4];
 mul.wide.u32 %rd5, %r5, 4; add.s64 %rd6, %rd2, %rd5;
 st.global.f32 [%rd6], %f1;
 ret;
}
"""


SHARED_STRIDE = r"""
.version 7.0
.target sm_80
.address_size 64
// each lane reads shared word (lane * stride) % 1024, or word 0 for all lanes when stride is 0
.visible .entry shared_stride(.param .u64 dst, .param .u32 stride)
{
 .shared .align 4 .b8 smem[4096];
 .reg .b32 %r<8>; .reg .f32 %f<2>; .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [dst]; ld.param.u32 %r1, [stride];
 mov.u32 %r2, %tid.x;
 mul.lo.s32 %r3, %r2, %r1;
 and.b32 %r3, %r3, 1023;
 shl.b32 %r4, %r3, 2;
 mov.u32 %r5, smem;
 add.s32 %r6, %r5, %r4;
 ld.shared.f32 %f1, [%r6];
 mul.wide.u32 %rd2, %r2, 4; add.s64 %rd3, %rd1, %rd2;
 st.global.f32 [%rd3], %f1;
 ret;
}
"""


STREAM_LOADS = r"""
.version 7.0
.target sm_80
.address_size 64
// each warp streams `iters` iterations of 4 independent float4 loads (2 KiB per warp in flight); the loop
// is not unrolled (as `#pragma unroll 1` makes ptxas keep it), so that number holds with codegen="ptxas" too
.visible .entry stream_loads(.param .u64 src, .param .u64 out, .param .u32 iters)
{
 .reg .pred %p<2>; .reg .b32 %r<10>; .reg .f32 %f<20>; .reg .b64 %rd<12>;
 ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [out]; ld.param.u32 %r1, [iters];
 mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
 mad.lo.s32 %r5, %r2, %r3, %r4;          // global thread id
 mov.u32 %r6, %nctaid.x; mul.lo.s32 %r7, %r6, %r3;   // threads in the grid
 mul.wide.u32 %rd3, %r5, 16; add.s64 %rd4, %rd1, %rd3;
 mul.wide.u32 %rd5, %r7, 16;             // bytes per grid-wide float4 sweep
 mov.f32 %f17, 0f00000000;
 mov.u32 %r8, 0;
$L_it:
 .pragma "nounroll";
 ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];
 add.s64 %rd6, %rd4, %rd5;
 ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd6];
 add.s64 %rd7, %rd6, %rd5;
 ld.global.v4.f32 {%f9, %f10, %f11, %f12}, [%rd7];
 add.s64 %rd8, %rd7, %rd5;
 ld.global.v4.f32 {%f13, %f14, %f15, %f16}, [%rd8];
 add.s64 %rd4, %rd8, %rd5;
 add.f32 %f17, %f17, %f1; add.f32 %f17, %f17, %f5; add.f32 %f17, %f17, %f9; add.f32 %f17, %f17, %f13;
 add.s32 %r8, %r8, 1;
 setp.lt.u32 %p1, %r8, %r1;
 @%p1 bra $L_it;
 mul.wide.u32 %rd9, %r5, 4; add.s64 %rd10, %rd2, %rd9;
 st.global.f32 [%rd10], %f17;
 ret;
}
"""


def stream_loads(vector_width: int) -> str:
    """STREAM_LOADS with ``vector_width`` floats per lane and load (1 or 4)."""
    if vector_width == 4:
        return STREAM_LOADS
    text = STREAM_LOADS.replace("mul.wide.u32 %rd3, %r5, 16", "mul.wide.u32 %rd3, %r5, 4")
    text = text.replace("mul.wide.u32 %rd5, %r7, 16", "mul.wide.u32 %rd5, %r7, 4")
    for first in (1, 5, 9, 13):
        group = ", ".join(f"%f{first + i}" for i in range(4))
        text = text.replace(f"ld.global.v4.f32 {{{group}}}", f"ld.global.f32 %f{first}")
    return text.replace("four float4 loads", "four float loads")


ROWS_16B = r"""
.version 7.0
.target sm_80
.address_size 64
// thread t XORs the words of row t (src + t * pitch) with `steps` 16-byte loads, one in flight at a time
// (the loop is not unrolled, as `#pragma unroll 1` makes ptxas keep it):
// each 32-byte sector is requested by two consecutive loads, a DRAM latency apart
.visible .entry rows16(.param .u64 src, .param .u64 out, .param .u32 pitch, .param .u32 steps)
{
 .reg .pred %p<2>; .reg .b32 %r<16>; .reg .b64 %rd<8>;
 ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [out]; ld.param.u32 %r1, [pitch]; ld.param.u32 %r9, [steps];
 mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
 mad.lo.s32 %r5, %r2, %r3, %r4;          // global thread id = row
 mul.wide.u32 %rd3, %r5, %r1; add.s64 %rd4, %rd1, %rd3;
 mov.u32 %r10, 0;
 mov.u32 %r8, 0;
$L_it:
 .pragma "nounroll";
 ld.global.v4.u32 {%r11, %r12, %r13, %r14}, [%rd4];
 add.s64 %rd4, %rd4, 16;
 xor.b32 %r10, %r10, %r11; xor.b32 %r10, %r10, %r12; xor.b32 %r10, %r10, %r13; xor.b32 %r10, %r10, %r14;
 add.s32 %r8, %r8, 1;
 setp.lt.u32 %p1, %r8, %r9;
 @%p1 bra $L_it;
 mul.wide.u32 %rd5, %r5, 4; add.s64 %rd6, %rd2, %rd5;
 st.global.u32 [%rd6], %r10;
 ret;
}
"""

L1_RESIDENT_LOADS = r"""
.version 7.0
.target sm_80
.address_size 64
// every warp re-reads the same 2 KiB window with float4 loads: after the first touch all hits are in L1
.visible .entry l1_loads(.param .u64 src, .param .u64 out, .param .u32 iters)
{
 .reg .pred %p<2>; .reg .b32 %r<8>; .reg .f32 %f<8>; .reg .b64 %rd<8>;
 ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [out]; ld.param.u32 %r1, [iters];
 mov.u32 %r2, %tid.x;
 and.b32 %r3, %r2, 127;
 mul.wide.u32 %rd3, %r3, 16; add.s64 %rd4, %rd1, %rd3;
 mov.f32 %f5, 0f00000000;
 mov.u32 %r4, 0;
$L_it:
 .pragma "nounroll";
 ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];
 add.f32 %f5, %f5, %f1;
 add.s32 %r4, %r4, 1;
 setp.lt.u32 %p1, %r4, %r1;
 @%p1 bra $L_it;
 mov.u32 %r5, %ctaid.x; mov.u32 %r6, %ntid.x; mad.lo.s32 %r7, %r5, %r6, %r2;
 mul.wide.u32 %rd5, %r7, 4; add.s64 %rd6, %rd2, %rd5;
 st.global.f32 [%rd6], %f5;
 ret;
}
"""


def finish_clock(count: int) -> str:
    """Each warp runs a chain of ``count`` dependent FFMAs, then stores ``%clock`` (when it got there) to
    ``out[warp]``: the order in which a scheduler lets the warps finish."""
    body = "\n".join(" fma.rn.f32 %f1, %f1, %f2, %f2;" for _ in range(count))
    return f"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry finish_order(.param .u64 out)
{{
 .reg .f32 %f<3>; .reg .b32 %r<4>; .reg .b64 %rd<4>;
 mov.f32 %f1, 0f3F800000;
 mov.f32 %f2, 0f3F000000;
{body}
 mov.u32 %r1, %clock;
 mov.u32 %r2, %tid.x;
 shr.u32 %r3, %r2, 5;
 ld.param.u64 %rd1, [out];
 mul.wide.u32 %rd2, %r3, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r1;
 ret;
}}
"""

L1_STRIDED_LOADS = r"""
.version 7.0
.target sm_80
.address_size 64
// lane l of every warp re-reads the 4 bytes at src + l * stride_bytes: after the first touch all hits are in L1,
// and each warp request touches the same lanes' lines and banks
.visible .entry l1_strided(.param .u64 src, .param .u64 out, .param .u32 iters, .param .u32 stride_bytes)
{
 .reg .pred %p<2>; .reg .b32 %r<10>; .reg .f32 %f<4>; .reg .b64 %rd<8>;
 ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [out]; ld.param.u32 %r1, [iters]; ld.param.u32 %r8, [stride_bytes];
 mov.u32 %r2, %tid.x;
 and.b32 %r3, %r2, 31;
 mul.wide.u32 %rd3, %r3, %r8; add.s64 %rd4, %rd1, %rd3;
 mov.f32 %f2, 0f00000000;
 mov.u32 %r4, 0;
$L_it:
 .pragma "nounroll";
 ld.global.f32 %f1, [%rd4];
 add.f32 %f2, %f2, %f1;
 add.s32 %r4, %r4, 1;
 setp.lt.u32 %p1, %r4, %r1;
 @%p1 bra $L_it;
 mov.u32 %r5, %ctaid.x; mov.u32 %r6, %ntid.x; mad.lo.s32 %r7, %r5, %r6, %r2;
 mul.wide.u32 %rd5, %r7, 4; add.s64 %rd6, %rd2, %rd5;
 st.global.f32 [%rd6], %f2;
 ret;
}
"""
