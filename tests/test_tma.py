"""TMA tensor copies (cp.async.bulk.tensor, cp.reduce.async.bulk.tensor, the L2 prefetch) and GPU.tensor_map.

Expected values are computed here, independently of gpusim's code: the box by a numpy gather over the
coordinates (out-of-bounds positions filled with 0 or the all-ones-but-sign NaN), the swizzle by the
CUDA programming guide's description of the TMA swizzle modes (128-byte lines of 16-byte chunks; in each
1024/512/256-byte pattern chunk ``c`` of line ``r`` is stored at chunk ``c ^ (r % 8)``, ``c ^ (r % 4)`` (in
pairs of lines... as bits 7-8), ``c ^ (r % 2)``) written as a numpy reshape, and the timing band from the
config's latencies and bandwidths.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import (
    ClusterAccessError,
    GpusimError,
    LaunchError,
    MbarrierError,
    TensorMapError,
    UnsupportedPTXError,
)

CONFIG = "h100-sxm"


def _coords_params(rank):
    return "".join(f", .param .s32 k_c{i}" for i in range(rank))


def _load_coords(rank):
    return "\n".join(f"  ld.param.s32 %c{i}, [k_c{i}];" for i in range(rank))


def _tensor_operand(rank):
    return "[%rd2, {" + ", ".join(f"%c{i}" for i in range(rank)) + "}]"


HEAD = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 64 .b8 k_map[128], .param .u64 k_io, .param .u32 k_bytes, .param .u32 k_xfer{params})
{{
  .reg .b32 %r<16>; .reg .b32 %c<6>; .reg .b64 %rd<16>; .reg .pred %p<4>;
  .shared .align 1024 .b8 buf[{shared}];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u32 %r2, bar;
  mbarrier.init.shared.b64 [%r2], 1;
  mov.b64 %rd1, k_map;
  cvta.param.u64 %rd2, %rd1;
{coords}
  ld.param.u32 %r3, [k_bytes];
  ld.param.u32 %r9, [k_xfer];
  ld.param.u64 %rd4, [k_io];
  mov.u32 %r5, buf;
  add.u32 %r5, %r5, {shift};
"""
WAIT = """  mov.u64 %rd8, %clock64;
WAIT{n}:
  mbarrier.try_wait.parity.shared.b64 %p2, [%r2], {parity};
  @!%p2 bra WAIT{n};
  mov.u64 %rd9, %clock64;
"""
LOAD = HEAD + """  mbarrier.arrive.expect_tx.shared.b64 %rd3, [%r2], %r3;
  mov.u64 %rd7, %clock64;
  cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r5], {tensor}, [%r2];
""" + WAIT.format(n=0, parity=0) + """  sub.u64 %rd10, %rd9, %rd7;
  st.global.u64 [%rd4], %rd10;
  add.u64 %rd4, %rd4, 16;
  cp.async.bulk.global.shared::cta.bulk_group [%rd4], [%r5], %r9;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
DONE:
  ret;
}}
"""
STORE = HEAD + """  mbarrier.arrive.expect_tx.shared.b64 %rd3, [%r2], %r9;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd4], %r9, [%r2];
""" + WAIT.format(n=0, parity=0) + """  {op} {tensor}, [%r5];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
DONE:
  ret;
}}
"""


def _ptx(template, rank, shared=16384, shift=0, op="cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group"):
    return template.format(params=_coords_params(rank), shared=shared, coords=_load_coords(rank), shift=shift,
                           rank=rank, tensor=_tensor_operand(rank), op=op.format(rank=rank))


# ---------------------------------------------------------------- the independent models
def _gather(host, box, coords, estrides, fill_bits):
    """The box (numpy order: outermost first) of ``host`` at innermost-first ``coords``; OOB -> fill_bits."""
    rank = host.ndim
    counts = [-(-b // e) for b, e in zip(box, estrides, strict=True)]
    bits = host.view(np.dtype(f"u{host.itemsize}"))
    out = np.full(counts[::-1], fill_bits, dtype=bits.dtype)
    for index in np.ndindex(*counts[::-1]):
        x = [coords[i] + index[rank - 1 - i] * estrides[i] for i in range(rank)]
        if all(0 <= x[i] < host.shape[rank - 1 - i] for i in range(rank)):
            out[index] = bits[tuple(x[::-1])]
    return out


def _swizzle(raw: bytes, span: int) -> np.ndarray:
    """The shared-memory image of linear box bytes ``raw`` under a ``span``-byte swizzle (0: none)."""
    data = np.frombuffer(raw, dtype=np.uint8)
    if span == 0:
        return data.copy()
    pad = (-len(data)) % 128
    lines = np.concatenate([data, np.zeros(pad, np.uint8)]).reshape(-1, 8, 16)
    out = np.zeros_like(lines)
    line = np.arange(lines.shape[0])
    period = {128: 8, 64: 4, 32: 2}[span]
    for chunk in range(8):
        out[line, chunk ^ (line % period)] = lines[:, chunk]
    return out.reshape(-1)[:len(data)]


def _nan_bits(itemsize):
    return (1 << (8 * itemsize - 1)) - 1


def _run_load(gpu, host, box, coords, swizzle=0, estrides=None, oob_fill="zero", timing=False, shift=0, times=1,
              view=None):
    """Load the box ``times`` times (the same arrays: later runs find them in L2); the last run, the box's bytes
    and the cycles from the copy's issue to the mbarrier wait's end. ``view``: (shape, strides) of the map."""
    rank = host.ndim if view is None else len(view[0])
    arr = gpu.to_device(host)
    window = {} if view is None else {"shape": view[0], "strides": view[1]}
    tmap = gpu.tensor_map(arr, box=box, swizzle=swizzle, element_strides=estrides, oob_fill=oob_fill, **window)
    nbytes = tmap.box_bytes
    xfer = -(-nbytes // 16) * 16
    io = gpu.zeros(16 + xfer, np.uint8)
    kernel = gpu.load_ptx(_ptx(LOAD, rank, shared=max(xfer, 1024) + 1024, shift=shift))["k"]
    args = [tmap, io, np.uint32(nbytes), np.uint32(xfer), *[np.int32(c) for c in coords]]
    for _ in range(times):
        run = gpu.launch(kernel, grid=1, block=32, args=args, timing=timing)
    raw = io.get()
    return run, raw[16:16 + nbytes], int(raw[:8].view(np.uint64)[0])


CASES = [  # shape (numpy), box (innermost first), coords, element strides
    ((200,), [64], [150], None),
    ((40, 72), [16, 8], [-4, 35], None),
    ((5, 9, 24), [8, 4, 2], [20, -2, 4], None),
    ((3, 4, 5, 8), [4, 2, 2, 2], [6, 3, -1, 2], None),
    ((2, 3, 3, 4, 12), [8, 2, 2, 2, 1], [-4, 3, 2, 1, 1], None),
    ((30, 64), [16, 16], [-5, 20], [3, 2]),
]


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("shape, box, coords, estrides", CASES)
def test_load_matches_numpy_gather(shape, box, coords, estrides, timing):
    """1D..5D boxes, negative and past-the-end coordinates (zero fill) and element strides."""
    rng = np.random.default_rng(3)
    host = rng.integers(1, 1 << 30, size=shape, dtype=np.int64).astype(np.float32)
    gpu = gpusim.GPU(CONFIG, sms=1)
    _, got, _ = _run_load(gpu, host, box, coords, estrides=estrides, timing=timing)
    expect = _gather(host, box, coords, estrides or [1] * len(box), 0)
    assert got.tobytes() == expect.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_nan_fill(dtype):
    host = np.arange(12 * 16, dtype=dtype).reshape(12, 16)
    gpu = gpusim.GPU(CONFIG, sms=1)
    _, got, _ = _run_load(gpu, host, [16, 8], [-8, 8], oob_fill="nan")
    expect = _gather(host, [16, 8], [-8, 8], [1, 1], _nan_bits(host.itemsize))
    assert got.tobytes() == expect.tobytes()
    assert np.isnan(got.view(dtype)).sum() == 8 * 16 - 4 * 8


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("span", [32, 64, 128])
def test_swizzle_modes(span, timing):
    """Each swizzle mode against the numpy model; the box's inner extent is the swizzle span."""
    elems = span // 2
    host = np.arange(40 * 104, dtype=np.uint16).reshape(40, 104) * 3 + 1
    gpu = gpusim.GPU(CONFIG, sms=1)
    _, got, _ = _run_load(gpu, host, [elems, 32], [4, 5], swizzle=span, timing=timing)
    linear = _gather(host, [elems, 32], [4, 5], [1, 1], 0).tobytes()
    assert np.array_equal(got, _swizzle(linear, span))
    assert not np.array_equal(got, np.frombuffer(linear, np.uint8))


def test_swizzle_follows_the_shared_address():
    """A box at a 128-byte but not 1024-byte aligned address starts mid-pattern (the address bits decide)."""
    host = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    gpu = gpusim.GPU(CONFIG, sms=1)
    _, got, _ = _run_load(gpu, host, [32, 8], [0, 0], swizzle=128, shift=384)
    linear = np.frombuffer(_gather(host, [32, 8], [0, 0], [1, 1], 0).tobytes(), np.uint8)
    shifted = _swizzle(bytes(384) + linear.tobytes(), 128)[384:]
    assert np.array_equal(got, shifted)


STORE_OP = "cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group"


def _run_store(gpu, host, box, coords, shared_bytes, op=STORE_OP, swizzle=0, timing=False):
    rank = host.ndim
    arr = gpu.to_device(host)
    tmap = gpu.tensor_map(arr, box=box, swizzle=swizzle)
    xfer = -(-len(shared_bytes) // 16) * 16
    io = gpu.to_device(np.concatenate([shared_bytes, np.zeros(xfer - len(shared_bytes), np.uint8)]))
    kernel = gpu.load_ptx(_ptx(STORE, rank, shared=xfer + 1024, op=op))["k"]
    args = [tmap, io, np.uint32(tmap.box_bytes), np.uint32(xfer), *[np.int32(c) for c in coords]]
    gpu.launch(kernel, grid=1, block=32, args=args, timing=timing)
    return arr.get()


def _scatter(host, values, box, coords, combine):
    out = host.copy()
    counts = box[::-1]
    for index in np.ndindex(*counts):
        x = [coords[i] + index[host.ndim - 1 - i] for i in range(host.ndim)]
        if all(0 <= x[i] < host.shape[host.ndim - 1 - i] for i in range(host.ndim)):
            out[tuple(x[::-1])] = combine(out[tuple(x[::-1])], values[index])
    return out


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("swizzle", [0, 128])
def test_store_is_clipped_to_the_tensor(swizzle, timing):
    rng = np.random.default_rng(5)
    host = rng.standard_normal((20, 40)).astype(np.float32)
    values = rng.standard_normal((16, 32)).astype(np.float32)
    shared = _swizzle(values.tobytes(), swizzle)
    gpu = gpusim.GPU(CONFIG, sms=1)
    got = _run_store(gpu, host, [32, 16], [20, -6], shared, swizzle=swizzle, timing=timing)
    assert np.array_equal(got, _scatter(host, values, [32, 16], [20, -6], lambda old, new: new))


REDUCTIONS = [
    ("add", np.float32, lambda a, b: np.float32(a + b)),
    ("add", np.int32, lambda a, b: np.int32(np.int64(a) + np.int64(b) & 0xFFFFFFFF)),
    ("min", np.int32, min),
    ("max", np.int32, max),
    ("min", np.uint32, min),
    ("and", np.uint32, lambda a, b: a & b),
    ("or", np.uint32, lambda a, b: a | b),
    ("xor", np.uint32, lambda a, b: a ^ b),
    ("inc", np.uint32, lambda a, b: np.uint32(0) if a >= b else np.uint32(a + 1)),
    ("dec", np.uint32, lambda a, b: b if a == 0 or a > b else np.uint32(a - 1)),
    ("max", np.float64, max),
]


@pytest.mark.parametrize("name, dtype, combine", REDUCTIONS, ids=[f"{n}-{np.dtype(d).name}" for n, d, _ in REDUCTIONS])
def test_reduce(name, dtype, combine):
    rng = np.random.default_rng(11)
    if np.dtype(dtype).kind == "f":
        host = rng.standard_normal((12, 16)).astype(dtype)
        values = rng.standard_normal((8, 8)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        low = max(info.min, -1000)
        host = rng.integers(low, 1000, size=(12, 16)).astype(dtype)
        values = rng.integers(low, 1000, size=(8, 8)).astype(dtype)
    if np.dtype(dtype).itemsize == 8:
        host, values = host[:, :16], values
    gpu = gpusim.GPU(CONFIG, sms=1)
    op = "cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta." + name + ".tile.bulk_group"
    got = _run_store(gpu, host, [8, 8], [12, 7], np.frombuffer(values.tobytes(), np.uint8), op=op)
    assert np.array_equal(got, _scatter(host, values, [8, 8], [12, 7], combine))


def test_prefetch_runs_and_moves_nothing():
    ptx = _ptx(LOAD, 2).replace(
        "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r5], "
        "[%rd2, {%c0, %c1}], [%r2];",
        "  cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd2, {%c0, %c1}];\n"
        "  mbarrier.complete_tx.shared.b64 [%r2], %r3;")
    gpu = gpusim.GPU(CONFIG, sms=1)
    arr = gpu.to_device(np.ones((8, 16), np.float32))
    tmap = gpu.tensor_map(arr, box=[16, 8])
    io = gpu.zeros(16 + 512, np.uint8)
    kernel = gpu.load_ptx(ptx)["k"]
    for timing in (False, True):
        gpu.launch(kernel, grid=1, block=32, args=[tmap, io, np.uint32(512), np.uint32(512), np.int32(0),
                                                    np.int32(0)], timing=timing)
        assert not io.get()[16:].any()


# ---------------------------------------------------------------- timing
def test_latency_of_a_16k_box_is_within_the_config_band():
    """A cold 16 KiB load (128 rows of 128 B) on one SM: at least the DRAM latency plus the bytes through the
    SM's L2 port; at most that plus a descriptor miss, the unit's row issue, an L2 latency and the shared
    write. Warm (the box already in L2): the same with the L2 latency instead of DRAM's."""
    gpu = gpusim.GPU(CONFIG)             # the whole chip: one SM has all of L2's and DRAM's bandwidth
    cfg = gpu.config
    host = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    nbytes, rows = 128 * 128, 128
    cold_rate = min(cfg.interconnect_bytes_per_cycle_per_sm, cfg.dram_bytes_per_cycle, cfg.l2_bytes_per_cycle)
    warm_rate = min(cfg.interconnect_bytes_per_cycle_per_sm, cfg.l2_bytes_per_cycle)
    extra = (cfg.tma_descriptor_miss_cycles + rows / cfg.tma_requests_per_cycle + cfg.l2_latency_cycles
             + nbytes / cfg.shared_bytes_per_cycle_per_sm)
    _, _, cold = _run_load(gpu, host, [32, 128], [0, 0], swizzle=128, timing=True)
    low = cfg.dram_latency_cycles + nbytes / cold_rate
    assert low <= cold <= low + extra
    _, _, warm = _run_load(gpu, host, [32, 128], [0, 0], swizzle=128, timing=True, times=2)
    low = cfg.l2_latency_cycles + nbytes / warm_rate
    assert low <= warm <= low + extra
    assert warm < cold


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("kwargs, rule", [
    ({"box": [64, 300]}, "boxDim[1]"),
    ({"box": [0, 8]}, "boxDim[0]"),
    ({"box": [3, 8]}, "multiple of 16 bytes"),
    ({"box": [64, 8], "swizzle": 64}, "swizzle span"),
    ({"box": [8, 8], "swizzle": 48}, "swizzle must be"),
    ({"box": [8, 8], "element_strides": [9, 1]}, "elementStrides[0]"),
    ({"box": [8]}, "rank is 2"),
    ({"box": [8, 8], "oob_fill": "nan"}, "floating-point"),
    ({"box": [8, 8], "interleave": "16B"}, "not modelled"),
])
def test_map_validation(kwargs, rule):
    gpu = gpusim.GPU(CONFIG, sms=1)
    arr = gpu.to_device(np.zeros((16, 64), np.uint16))
    with pytest.raises(TensorMapError, match=rule.replace("[", r"\[").replace("]", r"\]")):
        gpu.tensor_map(arr, **kwargs)


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
def test_view_map_reads_a_window_of_a_larger_array(timing):
    """shape=/strides= (cuTensorMapEncodeTiled's globalDim and globalStrides over part of an allocation, as
    Triton's TensorDescriptor passes them): a box that crosses the window's edge is filled there, not read
    from the rest of the row."""
    host = np.random.default_rng(5).integers(1, 1 << 20, size=(40, 72)).astype(np.float32)
    gpu = gpusim.GPU(CONFIG, sms=1)
    _, got, _ = _run_load(gpu, host, [16, 8], [40, 35], timing=timing, view=((40, 48), (72, 1)))
    expect = _gather(np.ascontiguousarray(host[:, :48]), [16, 8], [40, 35], [1, 1], 0)
    assert got.tobytes() == expect.tobytes()
    assert np.count_nonzero(expect) and not np.all(expect)       # both read and filled elements


def test_view_map_rules():
    gpu = gpusim.GPU(CONFIG, sms=1)
    arr = gpu.to_device(np.zeros((16, 64), np.float32))
    tmap = gpu.tensor_map(arr, box=[8, 8], shape=(8, 32), strides=(128, 1))      # every other row, half of it
    assert tmap.dims == (32, 8) and tmap.strides == (512,)
    with pytest.raises(TensorMapError, match="reaches byte"):
        gpu.tensor_map(arr, box=[8, 8], shape=(9, 32), strides=(128, 1))
    with pytest.raises(TensorMapError, match="innermost"):
        gpu.tensor_map(arr, box=[8, 8], shape=(16, 32), strides=(64, 2))
    with pytest.raises(TensorMapError, match="strides="):
        gpu.tensor_map(arr, box=[8, 8], shape=(16, 32))
    with pytest.raises(TensorMapError, match=r"globalStrides\[0\]"):
        gpu.tensor_map(arr, box=[8, 8], shape=(4, 32), strides=(66, 1))


def test_map_stride_and_alignment_rules():
    gpu = gpusim.GPU(CONFIG, sms=1)
    with pytest.raises(TensorMapError, match=r"globalStrides\[0\]"):
        gpu.tensor_map(gpu.to_device(np.zeros((4, 6), np.float32)), box=[4, 4])      # 24-byte rows
    with pytest.raises(TensorMapError, match="tensorRank"):
        gpu.tensor_map(gpu.to_device(np.zeros((2,) * 6, np.float32)), box=[4] * 6)
    with pytest.raises(TensorMapError, match="DeviceArray"):
        gpu.tensor_map(np.zeros((4, 4), np.float32), box=[4, 4])
    assert issubclass(TensorMapError, LaunchError)
    tmap = gpu.tensor_map(gpu.to_device(np.zeros((4, 8), np.float32)), box=[4, 2], swizzle="none")
    with pytest.raises(AttributeError):
        tmap.box = (8, 8)                                                             # immutable


def test_map_passed_where_it_cannot_go():
    gpu = gpusim.GPU(CONFIG, sms=1)
    host = np.zeros((8, 16), np.float32)
    kernel = gpu.load_ptx(_ptx(LOAD, 2))["k"]
    arr = gpu.to_device(host)
    tmap = gpu.tensor_map(arr, box=[16, 8])
    io = gpu.zeros(16 + 512, np.uint8)
    with pytest.raises(TensorMapError, match=r"\.b8 NAME\[128\]"):
        gpu.launch(kernel, grid=1, block=32, args=[tmap, tmap, np.uint32(512), np.uint32(512), np.int32(0),
                                                   np.int32(0)])
    other = gpusim.GPU(CONFIG, sms=1)
    with pytest.raises(TensorMapError, match="another GPU"):
        other.launch(other.load_ptx(_ptx(LOAD, 2))["k"], grid=1, block=32,
                     args=[tmap, other.zeros(528, np.uint8), np.uint32(512), np.uint32(512), np.int32(0),
                           np.int32(0)])
    arr.free()
    with pytest.raises(TensorMapError, match="freed"):
        gpu.launch(kernel, grid=1, block=32, args=[tmap, io, np.uint32(512), np.uint32(512), np.int32(0),
                                                   np.int32(0)])


def _load_kernel_args(gpu, rank=2):
    arr = gpu.to_device(np.zeros((8, 16), np.float32))
    tmap = gpu.tensor_map(arr, box=[16, 8])
    return tmap, gpu.zeros(16 + 512, np.uint8)


def test_engine_errors():
    gpu = gpusim.GPU(CONFIG, sms=1)
    tmap, io = _load_kernel_args(gpu)
    rest = [io, np.uint32(512), np.uint32(512), np.int32(0), np.int32(0)]
    misaligned = gpu.load_ptx(_ptx(LOAD, 2, shift=64))["k"]
    with pytest.raises(MbarrierError, match="128-byte aligned"):
        gpu.launch(misaligned, grid=1, block=32, args=[tmap, *rest], timing=False)
    no_map = gpu.load_ptx(_ptx(LOAD, 2))["k"]
    with pytest.raises(MbarrierError, match="does not hold a tensor map"):
        gpu.launch(no_map, grid=1, block=32, args=[bytes(128), *rest], timing=False)
    uninit = gpu.load_ptx(_ptx(LOAD, 2).replace("  mbarrier.init.shared.b64 [%r2], 1;\n", ""))["k"]
    with pytest.raises(MbarrierError, match="not an initialised mbarrier"):
        gpu.launch(uninit, grid=1, block=32, args=[tmap, *rest], timing=False)
    three = gpu.tensor_map(gpu.to_device(np.zeros((2, 8, 16), np.float32)), box=[16, 8, 1])
    with pytest.raises(MbarrierError, match="rank 3"):
        gpu.launch(no_map, grid=1, block=32, args=[three, *rest], timing=False)


@pytest.mark.parametrize("modifier, text", [
    (".im2col", "im2col"),
    (".cta_group::1", "cta_group"),
])
def test_unmodelled_forms_are_refused(modifier, text):
    ptx = _ptx(LOAD, 2).replace(".global.tile.mbarrier::complete_tx::bytes",
                                ".global.tile.mbarrier::complete_tx::bytes" + modifier)
    if modifier == ".im2col":
        ptx = _ptx(LOAD, 2).replace(".global.tile.", ".global.im2col.")
    gpu = gpusim.GPU(CONFIG, sms=1)
    with pytest.raises(UnsupportedPTXError, match=text) as info:
        gpu.load_ptx(ptx)["k"]
    assert "<ptx>:25:" in str(info.value)           # the instruction's line


def test_multicast_forms():
    """.multicast::cluster: a load's modifier with a ctaMask operand after the mbarrier (PTX ISA); a mask naming
    a CTA outside the cluster (no cluster launch: a 1-CTA cluster) is the ISA's undefined behaviour, an error."""
    gpu = gpusim.GPU(CONFIG, sms=1)
    multicast = _ptx(LOAD, 2).replace(".global.tile.mbarrier::complete_tx::bytes",
                                      ".global.tile.mbarrier::complete_tx::bytes.multicast::cluster")
    with pytest.raises(GpusimError, match="ctaMask") as info:
        gpu.load_ptx(multicast)["k"]
    assert "<ptx>:25:" in str(info.value)
    kernel = gpu.load_ptx(multicast.replace("{%c0, %c1}], [%r2];", "{%c0, %c1}], [%r2], 2;"))["k"]
    tmap, io = _load_kernel_args(gpu)
    with pytest.raises(ClusterAccessError, match="rank"):
        gpu.launch(kernel, grid=1, block=32, timing=False,
                   args=[tmap, io, np.uint32(512), np.uint32(512), np.int32(0), np.int32(0)])
    store = _ptx(STORE, 2, op="cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group.multicast::cluster")
    with pytest.raises(GpusimError, match="load's modifier"):
        gpu.load_ptx(store)["k"]


# ---------------------------------------------------------------- nvcc's code (tests/data/hopper/tma_tiles.cu)
FIXTURE = Path(__file__).parent / "data" / "hopper" / "tma_tiles.ptx"


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
def test_nvcc_load_3d(timing):
    """`const __grid_constant__ CUtensorMap` (cvta.param of the parameter), a 3D box with an OOB corner and the
    64-byte swizzle, copied out by 128 threads after the mbarrier wait."""
    rng = np.random.default_rng(2)
    host = rng.standard_normal((6, 20, 32)).astype(np.float32)
    gpu = gpusim.GPU(CONFIG, sms=1)
    kernel = gpu.load(str(FIXTURE))["tma_load_3d"]
    tmap = gpu.tensor_map(gpu.to_device(host), box=[16, 8, 4], swizzle=64)
    out = gpu.zeros(tmap.box_bytes // 4, np.float32)
    minus_one = np.int32(-1).view(np.uint32)          # nvcc declares the int coordinates .u32
    gpu.launch(kernel, grid=1, block=128, timing=timing,
               args=[tmap, out, np.uint32(24), np.uint32(15), minus_one, np.uint32(tmap.box_bytes)])
    linear = _gather(host, [16, 8, 4], [24, 15, -1], [1, 1, 1], 0).tobytes()
    assert np.array_equal(out.get().view(np.uint8), _swizzle(linear, 64))


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("op", [0, 1], ids=["store", "reduce-add"])
def test_nvcc_store_and_reduce_2d(op, timing):
    rng = np.random.default_rng(4)
    host = rng.standard_normal((24, 40)).astype(np.float32)
    values = rng.standard_normal((16, 32)).astype(np.float32)
    gpu = gpusim.GPU(CONFIG, sms=1)
    kernel = gpu.load(str(FIXTURE))["tma_store_2d"]
    arr = gpu.to_device(host)
    tmap = gpu.tensor_map(arr, box=[32, 16])
    gpu.launch(kernel, grid=1, block=128, timing=timing,
               args=[tmap, gpu.to_device(values), np.int32(20), np.int32(12), np.uint32(values.size), np.int32(op)])
    combine = (lambda old, new: new) if op == 0 else (lambda old, new: np.float32(old + new))
    assert np.array_equal(arr.get(), _scatter(host, values, [32, 16], [20, 12], combine))


def test_wait_group_read_waits_for_the_source_reads_only():
    """PTX ISA, cp.async.bulk.wait_group: with .read the wait ends once the bulk groups' reads of their shared-memory
    source are done. A TMA store of a 128-row box (128 B per row) is read as the unit issues its rows, one per
    1 / tma_requests_per_cycle cycles after the map's descriptor (a miss: tma_descriptor_miss_cycles); the store
    itself completes only when L2 has accepted its last row, at least an L2 latency later."""
    gpu = gpusim.GPU(CONFIG, sms=1)
    config = gpu.config
    kernel = gpu.load(str(FIXTURE))["tma_store_wait"]
    waited = {}
    for read in (1, 0):
        out = gpu.zeros(1, np.int64)
        tmap = gpu.tensor_map(gpu.zeros((128, 32), np.float32), box=[32, 128])
        gpu.launch(kernel, grid=1, block=128, args=[tmap, out, np.int32(read)])
        waited[read] = int(out.get()[0])
    reads = config.tma_descriptor_miss_cycles + 128 / config.tma_requests_per_cycle
    assert waited[1] <= reads + 16, waited
    assert waited[0] >= waited[1] + config.l2_latency_cycles, waited
