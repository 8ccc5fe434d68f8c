"""Texture objects (gpu.texture) and the fetches nvcc emits for them (tests/ptx/texture/texture.cu, PTX
committed): tex.1d/2d/3d with float and integer coordinates, float, int and unsigned results, tld4
(tex2Dgather). Expected values come from a numpy reimplementation of the CUDA Programming Guide's
"Texture Fetching" formulas, written here independently of the engine: point sampling applies the
address mode to the coordinate (clamp to [0, 1 - 1/N], frac for wrap, frac or 1 - frac for mirror, the
border outside [0, 1)), linear filtering samples around x - 0.5 with 9-bit fixed-point weights (8
fractional bits) and applies the mode to each texel index. Each case runs functional and timed; the timed
path is also checked for the sectors a fetch reads and the latency it costs."""

import math
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.engine.sm import timing_state as T

PTX = Path(__file__).parent / "ptx" / "texture" / "texture.ptx"
TIMING = pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
RNG = np.random.default_rng(21)
N = 64                       # fetches per launch (two warps)


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("teaching")


@pytest.fixture(scope="module")
def module(gpu):
    return gpu.load(PTX)


# ------------------------------------------------------------------ the reference (programming guide)
def texel_values(array, channels, read_mode):
    """Texels as float64 with 4 components: missing channels read 0, and 1 for w."""
    data = array.astype(np.float64)
    if channels == 1:
        data = data[..., None]
    if read_mode == "normalized_float":
        info = np.iinfo(array.dtype)
        data = data / info.max if info.min == 0 else np.maximum(data / info.max, -1.0)
    out = np.zeros(data.shape[:-1] + (4,))
    out[..., 3] = 1.0
    out[..., :channels] = data
    return out


def point_coordinate(x, size, address, normalized):
    """The guide's point sampling on one axis: (texel index, inside) with the address mode on x."""
    x = x.astype(np.float64)
    if normalized:
        if address == "wrap":
            x = x - np.floor(x)
        elif address == "mirror":
            f = x - np.floor(x)
            x = np.where(np.floor(x) % 2 == 0, f, 1.0 - f)
        elif address == "clamp":
            x = np.clip(x, 0.0, 1.0 - 1.0 / size)
        inside = (x >= 0) & (x < 1)
        x = x * size
    else:
        if address == "clamp":
            x = np.clip(x, 0.0, size - 1)
        inside = (x >= 0) & (x < size)
    return np.clip(np.floor(x).astype(np.int64), 0, size - 1), inside


def index_address(i, size, address):
    """Address mode on a texel index (linear filtering's taps): (index, inside)."""
    if address == "wrap":
        return np.mod(i, size), np.ones(i.shape, bool)
    if address == "mirror":
        r = np.mod(i, 2 * size)
        return np.where(r < size, r, 2 * size - 1 - r), np.ones(i.shape, bool)
    inside = (i >= 0) & (i < size)
    return np.clip(i, 0, size - 1), inside if address == "border" else np.ones(i.shape, bool)


def reference(values, coords, *, filter, address, normalized, border):
    """tex1D/2D/3D<float4> of ``values`` ([z][y]x, 4 components) at ``coords`` (x, y, z float32 arrays)."""
    sizes = values.shape[:-1][::-1]            # (width, height, depth)
    border = np.broadcast_to(np.asarray(border, np.float64), (4,))
    if filter == "point":
        indices, inside = [], np.ones(coords[0].shape, bool)
        for x, size in zip(coords, sizes, strict=True):
            i, ok = point_coordinate(x, size, address, normalized)
            indices.append(i)
            inside &= ok if address == "border" else True
        got = values[tuple(indices[::-1])]
        return np.where(inside[:, None], got, border).astype(np.float32)
    base, alpha = [], []
    for x, size in zip(coords, sizes, strict=True):
        xt = x.astype(np.float64) * (size if normalized else 1)
        xb = xt - 0.5
        i = np.floor(xb)
        base.append(i.astype(np.int64))
        alpha.append(np.floor((xb - i) * 256 + 0.5) / 256)
    dims = len(coords)
    acc = np.zeros(coords[0].shape + (4,))
    for tap in range(2 ** dims):
        weight = np.ones(coords[0].shape)
        indices, inside = [], np.ones(coords[0].shape, bool)
        for axis in range(dims):
            d = (tap >> axis) & 1
            weight = weight * (alpha[axis] if d else 1 - alpha[axis])
            i, ok = index_address(base[axis] + d, sizes[axis], address)
            indices.append(i)
            inside &= ok
        texel = np.where(inside[:, None], values[tuple(indices[::-1])], border)
        acc += weight[:, None] * texel
    return acc.astype(np.float32)


def coordinates(shape, normalized, spread=0.3):
    """Random coordinates over the texture and a margin around it, off the texel grid's exact points."""
    out = []
    for size in shape[::-1]:
        lo, hi = (-spread, 1 + spread) if normalized else (-spread * size, (1 + spread) * size)
        x = RNG.uniform(lo, hi, N)
        grid = x * (size if normalized else 1)
        x = np.where(np.abs(grid - np.round(grid)) < 0.01, x + 0.013 / (size if normalized else 1), x)
        out.append(x.astype(np.float32))
    return out


def fetch(gpu, module, tex, coords, timing, kernel=None, dtype=np.float32):
    kernel = kernel or f"fetch{len(coords)}d"
    out = gpu.zeros((N, 4), dtype)
    args = [tex] + [gpu.to_device(c) for c in coords] + [out, np.int32(N)]
    run = gpu.launch(module[kernel], 2, 32, args, timing=timing)
    return out.get(), run


SHAPES = {1: (37,), 2: (9, 13), 3: (5, 6, 7)}
MODES = [("clamp", False), ("border", False), ("clamp", True), ("border", True), ("wrap", True),
         ("mirror", True)]


@TIMING
@pytest.mark.parametrize("filter", ["point", "linear"])
@pytest.mark.parametrize(("address", "normalized"), MODES, ids=[f"{a}-{'norm' if n else 'texel'}" for a, n in MODES])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_float_fetch_matches_the_programming_guide(gpu, module, dims, address, normalized, filter, timing):
    array = RNG.uniform(-4, 4, SHAPES[dims]).astype(np.float32)
    tex = gpu.texture(array, filter=filter, address=address, normalized=normalized, border=0.75)
    coords = coordinates(array.shape, normalized)
    got, _ = fetch(gpu, module, tex, coords, timing)
    want = reference(texel_values(array, 1, "element"), coords, filter=filter, address=address,
                     normalized=normalized, border=0.75)
    np.testing.assert_array_equal(got, want)
    tex.destroy()


@TIMING
@pytest.mark.parametrize(("dtype", "channels", "read_mode", "filter"), [
    (np.float32, 4, "element", "linear"), (np.float16, 2, "element", "linear"),
    (np.uint8, 4, "normalized_float", "linear"), (np.int8, 1, "normalized_float", "point"),
    (np.int16, 2, "normalized_float", "linear"), (np.uint16, 1, "normalized_float", "linear"),
])
def test_texel_formats_read_as_floats(gpu, module, dtype, channels, read_mode, filter, timing):
    shape = (11, 10) + ((channels,) if channels > 1 else ())
    if np.dtype(dtype).kind == "f":
        array = RNG.uniform(-2, 2, shape).astype(dtype)
    else:
        info = np.iinfo(dtype)
        array = RNG.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    tex = gpu.texture(array, filter=filter, channels=channels, read_mode=read_mode)
    coords = coordinates((11, 10), False)
    got, _ = fetch(gpu, module, tex, coords, timing)
    want = reference(texel_values(array, channels, read_mode), coords, filter=filter, address="clamp",
                     normalized=False, border=0.0)
    np.testing.assert_array_equal(got, want)


@TIMING
@pytest.mark.parametrize(("dtype", "kernel"), [(np.int8, "fetch2d_int"), (np.int32, "fetch2d_int"),
                                               (np.uint16, "fetch2d_uint"), (np.uint32, "fetch2d_uint")])
def test_integer_texels_read_as_elements(gpu, module, dtype, kernel, timing):
    info = np.iinfo(dtype)
    array = RNG.integers(info.min, info.max, (7, 9, 2), endpoint=True).astype(dtype)
    tex = gpu.texture(array, channels=2, address="border", border=5)
    coords = coordinates((7, 9), False)
    out_type = np.int32 if info.min < 0 else np.uint32
    got, _ = fetch(gpu, module, tex, coords, timing, kernel=kernel, dtype=out_type)
    ix, in_x = point_coordinate(coords[0], 9, "border", False)
    iy, in_y = point_coordinate(coords[1], 7, "border", False)
    want = np.zeros((N, 4), np.int64)
    want[:, :2] = array[iy, ix]
    want[:, 3] = 1
    want[~(in_x & in_y)] = 5
    np.testing.assert_array_equal(got, want.astype(out_type))


@TIMING
def test_tex1dfetch_reads_texel_indices_with_the_address_mode(gpu, module, timing):
    array = RNG.uniform(-1, 1, (50, 4)).astype(np.float32)
    ints = RNG.integers(-1000, 1000, (50, 4)).astype(np.int32)
    index = RNG.integers(-10, 60, N).astype(np.int32)
    for address, want_rows in (("clamp", np.clip(index, 0, 49)), ("border", index)):
        tex = gpu.texture(array, channels=4, address=address, border=-2.0)
        out = gpu.zeros((N, 4), np.float32)
        gpu.launch(module["fetch_index"], 2, 32, [tex, gpu.to_device(index), out, np.int32(N)], timing=timing)
        inside = (want_rows >= 0) & (want_rows < 50)
        want = np.where(inside[:, None], array[np.clip(want_rows, 0, 49)], -2.0).astype(np.float32)
        np.testing.assert_array_equal(out.get(), want)
    tex = gpu.texture(ints, channels=4)
    out = gpu.zeros((N, 4), np.int32)
    gpu.launch(module["fetch_index_int"], 2, 32, [tex, gpu.to_device(index), out, np.int32(N)], timing=timing)
    np.testing.assert_array_equal(out.get(), ints[np.clip(index, 0, 49)])


@TIMING
@pytest.mark.parametrize("address", ["clamp", "border"])
def test_tex2dgather_returns_the_bilinear_footprint(gpu, module, address, timing):
    array = RNG.uniform(-3, 3, (8, 12, 4)).astype(np.float32)
    tex = gpu.texture(array, channels=4, address=address, border=9.0)
    coords = coordinates((8, 12), False)
    out = gpu.zeros((N, 4, 4), np.float32)
    gpu.launch(module["gather"], 2, 32, [tex] + [gpu.to_device(c) for c in coords] + [out, np.int32(N)],
               timing=timing)
    i0 = np.floor(coords[0].astype(np.float64) - 0.5).astype(np.int64)
    j0 = np.floor(coords[1].astype(np.float64) - 0.5).astype(np.int64)
    values = texel_values(array, 4, "element")
    for slot, (di, dj) in enumerate([(0, 1), (1, 1), (1, 0), (0, 0)]):     # the PTX ISA's tld4 order
        i, in_i = index_address(i0 + di, 12, address)
        j, in_j = index_address(j0 + dj, 8, address)
        texel = np.where((in_i & in_j)[:, None], values[j, i], 9.0)
        for component in range(4):
            np.testing.assert_array_equal(out.get()[:, component, slot], texel[:, component].astype(np.float32))
    ints = RNG.integers(-100, 100, (8, 12)).astype(np.int32)
    tex = gpu.texture(ints)
    out = gpu.zeros((N, 4), np.int32)
    gpu.launch(module["gather_int"], 2, 32, [tex] + [gpu.to_device(c) for c in coords] + [out, np.int32(N)],
               timing=timing)
    for slot, (di, dj) in enumerate([(0, 1), (1, 1), (1, 0), (0, 0)]):
        np.testing.assert_array_equal(out.get()[:, slot], ints[np.clip(j0 + dj, 0, 7), np.clip(i0 + di, 0, 11)])


@TIMING
def test_box_filter_kernel(gpu, module, timing):
    image = RNG.uniform(0, 1, (20, 28)).astype(np.float32)
    tex = gpu.texture(image)
    out = gpu.zeros(image.shape, np.float32)
    gpu.launch(module["box3"], (4, 3), (8, 8), [tex, out, np.int32(28), np.int32(20)], timing=timing)
    padded = np.pad(image, 1, mode="edge").astype(np.float32)
    total = np.zeros_like(image)
    for dy in (-1, 0, 1):               # the kernel's order of additions, in float32
        for dx in (-1, 0, 1):
            total = (total + padded[1 + dy:21 + dy, 1 + dx:29 + dx]).astype(np.float32)
    np.testing.assert_array_equal(out.get(), total / np.float32(9.0))


# ------------------------------------------------------------------ timing
def test_a_fetch_reads_the_distinct_sectors_of_its_texels(gpu, module):
    array = RNG.uniform(0, 1, (16, 40)).astype(np.float32)
    tex = gpu.texture(array, filter="linear")
    coords = coordinates((16, 40), False, spread=0.0)
    _, run = fetch(gpu, module, tex, coords, True)
    texel_bytes, row_bytes = 4, 40 * 4
    expected = 0
    for warp in range(2):
        lanes = slice(warp * 32, warp * 32 + 32)
        x0 = np.floor(coords[0][lanes].astype(np.float64) - 0.5).astype(np.int64)
        y0 = np.floor(coords[1][lanes].astype(np.float64) - 0.5).astype(np.int64)
        addresses = [tex.data.ptr + np.clip(y0 + dy, 0, 15) * row_bytes + np.clip(x0 + dx, 0, 39) * texel_bytes
                     for dx in (0, 1) for dy in (0, 1)]
        expected += np.unique(np.concatenate(addresses) // 32).size
    assert run.metrics["l1tex__t_sectors_pipe_tex_mem_texture.sum"] == expected
    assert run.metrics["l1tex__t_requests_pipe_tex_mem_texture.sum"] == 2


@pytest.mark.parametrize("extra", [0, 50])
def test_a_fetch_costs_the_memory_latency_plus_the_texture_latency(module, extra):
    gpu = gpusim.GPU("teaching", texture_latency_cycles=gpusim.GPU("teaching").config.texture_latency_cycles + extra)
    mod = gpu.load(PTX)
    tex = gpu.texture(np.arange(8, dtype=np.float32).reshape(2, 4), channels=4)
    index = gpu.to_device(np.zeros(1, np.int32))
    latencies = []
    for _ in range(2):          # cold: DRAM; then the texel is in L2 (L1 starts empty at every launch)
        run = gpu.launch(mod["fetch_index"], 1, 1, [tex, index, gpu.zeros((1, 4), np.float32), np.int32(1)],
                         trace=True)
        rows = run.trace.raw_memory
        texture = rows[rows[:, T.MT_KIND] == 4]
        assert len(texture) == 1
        latencies.append(int(texture[0, T.MT_DONE] - texture[0, T.MT_ISSUE]))
    border = gpu.texture(np.zeros(4, np.float32), address="border")     # every texel outside: no memory
    run = gpu.launch(mod["fetch_index"], 1, 1, [border, gpu.to_device(np.full(1, -5, np.int32)),
                                                gpu.zeros((1, 4), np.float32), np.int32(1)], trace=True)
    rows = run.trace.raw_memory
    texture = rows[rows[:, T.MT_KIND] == 4]
    latencies.append(int(texture[0, T.MT_DONE] - texture[0, T.MT_ISSUE]))
    config = gpu.config
    # the cold texel is the first access to its DRAM bank: no row to close, so tRP less than a conflict
    cold = math.ceil(config.dram_latency_cycles - config.dram_trp_ns * config.core_clock_mhz / 1000)
    assert latencies == [cold + config.texture_latency_cycles,
                         config.l2_latency_cycles + config.texture_latency_cycles, config.texture_latency_cycles]
    assert texture[0, T.MT_SECTORS] == 0


# ------------------------------------------------------------------ errors
def test_texture_creation_follows_cudas_rules(gpu):
    data = np.zeros((4, 4), np.float32)
    with pytest.raises(gpusim.LaunchError, match="needs normalized=True"):
        gpu.texture(data, address="wrap")
    with pytest.raises(gpusim.LaunchError, match="needs normalized=True"):
        gpu.texture(data, address="mirror")
    with pytest.raises(gpusim.LaunchError, match="linear filtering needs a float result"):
        gpu.texture(data.astype(np.int32), filter="linear")
    with pytest.raises(gpusim.LaunchError, match="8- and 16-bit"):
        gpu.texture(data.astype(np.int32), read_mode="normalized_float")
    with pytest.raises(gpusim.LaunchError, match="channels as the last axis"):
        gpu.texture(data, channels=2)
    with pytest.raises(gpusim.LaunchError, match="1, 2 or 4"):
        gpu.texture(np.zeros((4, 3), np.float32), channels=3)
    with pytest.raises(gpusim.LaunchError, match="float32, float16"):
        gpu.texture(data.astype(np.float64))
    with pytest.raises(gpusim.LaunchError, match="filter must be"):
        gpu.texture(data, filter="cubic")
    with pytest.raises(gpusim.LaunchError, match="border must be"):
        gpu.texture(data, address="border", border=[1, 2, 3, 4, 5])
    tex = gpu.texture(data)
    assert int(tex) == tex.descriptor.ptr and "TextureObject" in repr(tex)


@TIMING
def test_a_handle_that_is_not_a_texture_is_a_located_error(gpu, module, timing):
    not_a_texture = gpu.zeros(64, np.int64)
    coords = [gpu.to_device(np.zeros(N, np.float32)) for _ in range(2)]
    with pytest.raises(gpusim.TextureError, match=r"texture\.ptx:\d+.*not a texture object") as info:
        gpu.launch(module["fetch2d"], 2, 32, [not_a_texture.ptr] + coords + [gpu.zeros((N, 4)), np.int32(N)],
                   timing=timing)
    assert len(info.value.thread) == 3 and info.value.line > 0


@TIMING
def test_a_fetch_of_the_wrong_geometry_or_type_is_refused(gpu, module, timing):
    coords = [gpu.to_device(np.zeros(N, np.float32)) for _ in range(2)]
    tex1 = gpu.texture(np.zeros(8, np.float32))
    with pytest.raises(gpusim.TextureError, match="geometry does not match the texture, which is 1D"):
        gpu.launch(module["fetch2d"], 2, 32, [tex1] + coords + [gpu.zeros((N, 4)), np.int32(N)], timing=timing)
    tex_int = gpu.texture(np.zeros((4, 4), np.int32))
    with pytest.raises(gpusim.TextureError, match="result type does not match an integer texture"):
        gpu.launch(module["fetch2d"], 2, 32, [tex_int] + coords + [gpu.zeros((N, 4)), np.int32(N)], timing=timing)


SINK_KERNEL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p_tex, .param .u64 p_out)
{ .reg .f32 %f<8>; .reg .b32 %r<4>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [p_tex]; ld.param.u64 %rd2, [p_out]; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x; cvt.rn.f32.u32 %f5, %r1; add.f32 %f5, %f5, 0f3F000000; mov.f32 %f6, 0f3F000000;
  tex.2d.v4.f32.f32 {_, %f2, _, _}, [%rd1, {%f5, %f6}];
  mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd2, %rd3; st.global.f32 [%rd4], %f2;
  ret; }
"""


@TIMING
def test_sinks_in_the_destination_vector(gpu, timing):
    module = gpu.load_ptx(SINK_KERNEL, name="sink.ptx")
    array = RNG.uniform(0, 1, (1, 32, 2)).astype(np.float32)
    tex = gpu.texture(array, channels=2)
    out = gpu.zeros(32, np.float32)
    gpu.launch(module["k"], 1, 32, [tex, out], timing=timing)
    np.testing.assert_array_equal(out.get(), array[0, :, 1])


def test_texture_operands_are_checked_at_load(gpu):
    wide = SINK_KERNEL.replace("{_, %f2, _, _}", "{_, %rd5, _, _}")
    with pytest.raises(gpusim.PTXSyntaxError, match="must be 32-bit"):
        gpu.load_ptx(wide, name="wide.ptx")
    short = SINK_KERNEL.replace("{_, %f2, _, _}", "{%f2, %f3}")
    with pytest.raises(gpusim.PTXSyntaxError, match="writes 4 registers"):
        gpu.load_ptx(short, name="short.ptx")
    sampler = SINK_KERNEL.replace("[%rd1, {%f5, %f6}]", "[%rd1, %rd2, {%f5, %f6}]")
    with pytest.raises(gpusim.UnsupportedPTXError, match="independent texture mode"):
        gpu.load_ptx(sampler, name="sampler.ptx")
