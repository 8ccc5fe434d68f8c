"""ld/st in every vector width x element size x register width x state space, against numpy: each lane
stores a vector of elements from registers to the space, loads it back into registers of the given
width, and writes each register whole to global memory. Expected register values follow the PTX ISA:
a narrow load into a wider register is sign-extended for .s types and zero-extended otherwise, a store
takes the register's low bits. Also 32-bit address arithmetic in 32-bit spaces, WARP_SZ and the
predefined special registers, and per-kernel loading of a module with an unsupported kernel."""

import numpy as np
import pytest

import gpusim

TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
RNG = np.random.default_rng(8)
THREADS = 8
REG_DECL = {16: ".b16 %h", 32: ".b32 %r", 64: ".b64 %x"}
REG_PREFIX = {16: "%h", 32: "%r", 64: "%x"}


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("teaching")


def cases():
    for space in ("global", "shared", "local"):
        for vec in (1, 2, 4):
            for ty in ("u8", "s8", "u16", "s16", "b32", "s32", "u64"):
                bits = int(ty[1:])
                if vec * bits > 128:
                    continue
                for reg in (16, 32, 64):
                    if reg >= bits:
                        yield space, vec, ty, reg


def kernel(space: str, vec: int, ty: str, reg: int) -> str:
    bits = int(ty[1:])
    nbytes = vec * bits // 8
    regs = [f"{REG_PREFIX[reg]}{i}" for i in range(vec)]
    group = "{" + ", ".join(regs) + "}" if vec > 1 else regs[0]
    rt = f"b{reg}"
    if space == "global":
        where = "add.s64 %rd9, %rd3, %rd6;"        # a scratch global buffer
        addr = "%rd9"
    elif space == "shared":
        where = f"mul.lo.u32 %q1, %q0, {nbytes}; mov.u32 %q2, buf; add.u32 %q3, %q2, %q1;"
        addr = "%q3"
    else:
        where = ""
        addr = "loc"
    decl = (f".shared .align 16 .b8 buf[{THREADS * nbytes}];" if space == "shared" else
            f".local .align 16 .b8 loc[{nbytes}];" if space == "local" else "")
    loads_in = "\n".join(f"  ld.global.{rt} {regs[i]}, [%rd7+{8 * i}];" for i in range(vec))
    stores_out = "\n".join(f"  st.global.{rt} [%rd8+{8 * i}], {regs[i]};" for i in range(vec))
    clears = "\n".join(f"  mov.{rt} {regs[i]}, 0;" for i in range(vec))
    return HEADER + f"""
.visible .entry k(.param .u64 p_in, .param .u64 p_out, .param .u64 p_scratch)
{{
  .reg .b16 %h<4>; .reg .b32 %r<4>; .reg .b64 %x<4>; .reg .b32 %q<8>; .reg .b64 %rd<12>;
  {decl}
  ld.param.u64 %rd1, [p_in]; ld.param.u64 %rd2, [p_out]; ld.param.u64 %rd3, [p_scratch];
  mov.u32 %q0, %tid.x; mul.wide.u32 %rd4, %q0, 32; add.s64 %rd7, %rd1, %rd4; add.s64 %rd8, %rd2, %rd4;
  mul.wide.u32 %rd6, %q0, {nbytes};
  {where}
{loads_in}
  st.{space}{'.v' + str(vec) if vec > 1 else ''}.{ty} [{addr}], {group};
{clears}
  ld.{space}{'.v' + str(vec) if vec > 1 else ''}.{ty} {group}, [{addr}];
{stores_out}
  ret;
}}
"""


def expected(raw: np.ndarray, ty: str, reg: int) -> np.ndarray:
    """What each register holds after the round trip, as the uint64 the test reads back."""
    bits = int(ty[1:])
    low = raw & np.uint64((1 << bits) - 1) if bits < 64 else raw
    if ty[0] == "s" and bits < reg:
        sign = (low >> np.uint64(bits - 1)) & np.uint64(1)
        low = np.where(sign == 1, low | np.uint64(((1 << reg) - 1) ^ ((1 << bits) - 1)), low)
    return low & np.uint64((1 << reg) - 1) if reg < 64 else low


@TIMING
@pytest.mark.parametrize("space,vec,ty,reg", list(cases()), ids=lambda v: str(v))
def test_vector_load_store_round_trip(gpu, timing, space, vec, ty, reg):
    raw = RNG.integers(0, 1 << 63, (THREADS, 4), dtype=np.uint64) | np.uint64(1 << 63) * RNG.integers(
        0, 2, (THREADS, 4)).astype(np.uint64)
    raw &= np.uint64((1 << reg) - 1) if reg < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    k = gpu.load_ptx(kernel(space, vec, ty, reg))["k"]
    out = gpu.to_device(np.zeros((THREADS, 4), np.uint64))
    scratch = gpu.to_device(np.zeros(THREADS * 32, np.uint8))
    gpu.launch(k, 1, THREADS, [gpu.to_device(raw), out, scratch], timing=timing)
    got = out.get()[:, :vec]
    np.testing.assert_array_equal(got, expected(raw[:, :vec], ty, reg))
    if space == "global":      # the bytes in memory: each element's low bytes, little-endian, packed
        bits = int(ty[1:])
        elems = (raw[:, :vec] & (np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(2 ** 64 - 1)))
        packed = elems.astype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]).view(np.uint8)
        np.testing.assert_array_equal(scratch.get()[:THREADS * vec * bits // 8], packed.ravel())


@TIMING
def test_char4_load_into_16_bit_registers(gpu, timing):
    """The issue's case: ld.global.v4.u8 into four 16-bit registers gives [1, 2, 3, 4]."""
    k = gpu.load_ptx(kernel("global", 4, "u8", 16))["k"]
    raw = np.tile(np.array([1, 2, 3, 4], np.uint64), (THREADS, 1))
    out = gpu.to_device(np.zeros((THREADS, 4), np.uint64))
    gpu.launch(k, 1, THREADS, [gpu.to_device(raw), out, gpu.to_device(np.zeros(256, np.uint8))], timing=timing)
    assert out.get().tolist() == [[1, 2, 3, 4]] * THREADS


CONST_PTX = HEADER + """
.const .align 16 .b8 table[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
.visible .entry k(.param .u64 p_out, .param .align 8 .b8 p_pair[8])
{
  .reg .b16 %h<4>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out]; cvta.to.global.u64 %rd1, %rd1;
  ld.const.v4.u8 {%h0, %h1, %h2, %h3}, [table+4];
  cvt.u32.u16 %r0, %h0; cvt.u32.u16 %r1, %h3;
  ld.const.v2.u32 {%r2, %r3}, [table+8];
  ld.param.v2.u32 {%r4, %r5}, [p_pair];
  st.global.v2.u32 [%rd1], {%r0, %r1}; st.global.v2.u32 [%rd1+8], {%r2, %r3};
  st.global.v2.u32 [%rd1+16], {%r4, %r5};
  ret;
}
"""


@TIMING
def test_const_and_param_vector_loads(gpu, timing):
    k = gpu.load_ptx(CONST_PTX)["k"]
    out = gpu.to_device(np.zeros(6, np.uint32))
    pair = np.array([0x11223344, 0x55667788], np.uint32)
    table = np.arange(1, 17, dtype=np.uint8)
    gpu.launch(k, 1, 1, [out, pair.tobytes()], timing=timing)
    words = table.view(np.uint32)
    assert out.get().tolist() == [table[4], table[7], words[2], words[3], pair[0], pair[1]]


WRAP_PTX = HEADER + """
.visible .entry k(.param .u64 p_out)
{
  .reg .b32 %r<12>; .reg .b64 %rd<4>;
  .shared .align 4 .b32 tile[64];
  .local .align 4 .b32 priv[4];
  ld.param.u64 %rd1, [p_out]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r0, %tid.x; shl.b32 %r1, %r0, 2;
  mov.u32 %r2, tile; add.s32 %r3, %r2, %r1; add.s32 %r9, %r0, 100; st.shared.u32 [%r3], %r9;
  bar.sync 0;
  // nvcc's form: &tile - 64 in a 32-bit register, then [%r + 68] reads tile[1 + tid]
  add.s32 %r4, %r2, -64; add.s32 %r5, %r4, %r1; ld.shared.u32 %r6, [%r5+68];
  mov.u32 %r7, priv; add.s32 %r8, %r7, -8; st.local.u32 [%r8+12], %r0; ld.local.u32 %r10, [priv+4];
  mov.u32 %r11, WARP_SZ;
  mul.wide.u32 %rd2, %r0, 16; add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r6, %r10, %r11, %r0};
  ret;
}
"""


@TIMING
def test_32_bit_shared_and_local_addresses_wrap(gpu, timing):
    k = gpu.load_ptx(WRAP_PTX)["k"]
    n = 32
    out = gpu.to_device(np.zeros((n, 4), np.uint32))
    gpu.launch(k, 1, n, [out], timing=timing)
    tid = np.arange(n)
    expect = np.stack([np.where(tid + 1 < n, tid + 101, 0), tid, np.full(n, 32), tid], axis=1)
    np.testing.assert_array_equal(out.get(), expect)


def test_a_wrapped_address_outside_shared_memory_still_faults(gpu):
    text = WRAP_PTX.replace("[%r5+68]", "[%r5+4]")      # tile - 64 + 4: below the block's shared memory
    with pytest.raises(gpusim.IllegalAddressError, match="outside the block's shared memory"):
        gpu.launch(gpu.load_ptx(text)["k"], 1, 32, [gpu.zeros(128, np.uint32)], timing=False)


SPECIALS = [("%clusterid.x", lambda b, g: b), ("%nclusterid.x", lambda b, g: g), ("%cluster_ctaid.x", lambda b, g: 0),
            ("%cluster_nctaid.y", lambda b, g: 1), ("%cluster_ctarank", lambda b, g: 0),
            ("%cluster_nctarank", lambda b, g: 1), ("%is_explicit_cluster", lambda b, g: 0)]


@TIMING
def test_cluster_special_registers_without_a_cluster_launch(gpu, timing):
    """Each CTA is an implicit 1x1x1 cluster (PTX ISA): the cluster registers follow from %ctaid."""
    movs = "\n".join(f"  mov.u32 %r{i}, {name};" for i, (name, _) in enumerate(SPECIALS))
    stores = "\n".join(f"  st.global.u32 [%rd3+{4 * i}], %r{i};" for i in range(len(SPECIALS)))
    text = HEADER + f""".visible .entry k(.param .u64 p_out)
{{ .reg .b32 %r<12>; .reg .b64 %rd<4>; .reg .pred %p1;
  ld.param.u64 %rd1, [p_out]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r10, %tid.x; setp.ne.u32 %p1, %r10, 0; @%p1 ret;
  mov.u32 %r11, %ctaid.x; mul.wide.u32 %rd2, %r11, 32; add.s64 %rd3, %rd1, %rd2;
{movs}
{stores}
  ret; }}
"""
    grid = 3
    out = gpu.to_device(np.zeros((grid, 8), np.uint32))
    gpu.launch(gpu.load_ptx(text)["k"], grid, 32, [out], timing=timing)
    for b in range(grid):
        assert out.get()[b, :len(SPECIALS)].tolist() == [f(b, grid) for _, f in SPECIALS]


@pytest.mark.parametrize("name", ["%envreg3", "%pm0", "%pm7"])
def test_unmodelled_special_registers_are_named_as_unsupported(gpu, name):
    text = HEADER + f".visible .entry k()\n{{ .reg .b32 %r1;\n  mov.u32 %r1, {name};\n  ret; }}\n"
    with pytest.raises(gpusim.UnsupportedPTXError, match=f"special register '{name}'") as info:
        gpu.load_ptx(text, name="sr.ptx")["k"]
    assert info.value.line == text.splitlines().index(f"  mov.u32 %r1, {name};") + 1


TWO_KERNELS = HEADER + """
.visible .entry good(.param .u64 p_out)
{ .reg .b32 %r<4>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x; mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r1;
  ret; }
.visible .entry sampler(.param .u64 p_out, .param .u64 p_tex)
{ .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_tex];
  suld.b.2d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r5, %r6}];
  ret; }
"""


@TIMING
def test_module_with_an_unsupported_kernel_loads_and_runs_the_others(gpu, timing):
    module = gpu.load_ptx(TWO_KERNELS, name="two.ptx")
    out = gpu.zeros(32, np.uint32)
    gpu.launch(module["good"], 1, 32, [out], timing=timing)
    np.testing.assert_array_equal(out.get(), np.arange(32))
    line = TWO_KERNELS.splitlines().index("  suld.b.2d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r5, %r6}];") + 1
    for lookup in (lambda: module["sampler"], lambda: module.sampler):
        with pytest.raises(gpusim.UnsupportedPTXError, match=rf"two\.ptx:{line}:3: 'suld.b.2d.v4.b32.trap' is "
                           "not supported"):
            lookup()
    assert [k.name for k in module] == ["good"] and "sampler" in repr(module)


@pytest.mark.parametrize(("instruction", "message"), [
    ("tex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}], %f7;", "texture modifier"),
    ("tex.a2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%r5, %f5, %f6, %f6}];", "texture modifier"),
    ("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tref, {%f5, %f6}];", "texture references"),
    ("suld.b.2d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r5, %r6}];", "not texture queries or surfaces"),
    ("txq.width.b32 %r1, [%rd1];", "not texture queries or surfaces"),
])
def test_texture_instructions_outside_the_model_are_unsupported_not_syntax_errors(gpu, instruction, message):
    text = HEADER + (".visible .entry k(.param .u64 t)\n{ .reg .b32 %r<8>; .reg .f32 %f<8>; .reg .b64 %rd<4>;\n"
                     f"  ld.param.u64 %rd1, [t];\n  {instruction}\n  ret; }}\n")
    with pytest.raises(gpusim.UnsupportedPTXError, match=message) as info:
        gpu.load_ptx(text, name="tex.ptx")      # the module's only kernel: nothing to run, the load refuses
    assert info.value.line == text.splitlines().index(f"  {instruction}") + 1
