"""Device printf (vprintf records in the engine, formatted by gpusim.launch.printf): the output of every
supported conversion, flag, width, precision and length modifier against Python's own %-formatting of the
same values, the documented order, capture vs print, vprintf's return value, the buffer limit, and
formats that do not match their arguments. Kernels: tests/ptx/calls/printf.cu."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import ConfigError
from gpusim.launch.printf import format_record

HERE = Path(__file__).parent / "ptx" / "calls"
MODES = [pytest.param(False, id="functional"), pytest.param(True, id="timed")]
M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("h100-sxm", sms=2, printf="capture")


@pytest.fixture(scope="module")
def mod(gpu):
    return gpu.load(HERE / "printf.ptx")


def py(fmt: str, *values) -> str:
    """Python's %-formatting of a C format: length modifiers dropped (the values are already converted to the
    width they name), %u as %d of the unsigned value."""
    fmt = re.sub(r"%([-+ #0]*\*?\d*(?:\.\d*)?)(?:hh|h|ll|l|z)([diouxX])", r"%\1\2", fmt)
    return re.sub(r"%([-+ #0]*\d*(?:\.\d*)?)u", r"%\1d", fmt) % values


@pytest.mark.parametrize("timing", MODES)
def test_hello_order_by_block_then_thread(mod, timing):
    run = mod.k_hello[3, 4](timing=timing)
    assert run.stdout == "".join(py("block %d thread %d\n", b, t) for b in range(3) for t in range(4))


@pytest.mark.parametrize("timing", MODES)
def test_every_supported_conversion(gpu, mod, timing):
    i32 = np.array([5, -3, 255, 0, 70000], np.int32)
    i64 = np.array([1 << 40, -2, 7, 0, -(1 << 50)], np.int64)
    f32 = np.array([1.5, -2.25, 3.0e8, 0.1, -0.0], np.float32)
    f64 = np.array([3.14159, -1e-7, 12345.678, 0.0, 2.5e300])
    text = np.frombuffer(b"world\0", np.uint8).copy()
    run = mod.k_formats[1, 5](gpu.to_device(i32), gpu.to_device(i64), gpu.to_device(f32), gpu.to_device(f64),
                              gpu.to_device(text), timing=timing)
    per_call = [[], [], [], [], []]     # each printf call prints its 5 lanes before the next call (warp order)
    for t in range(5):
        a, q, f, d = int(i32[t]), int(i64[t]), float(f32[t]), float(f64[t])
        ua = a & M32
        h = np.int16(np.int32(a).astype(np.int16)).item()
        hh = np.int8(np.int32(a).astype(np.int8)).item()
        hu = a & 0xFFFF
        per_call[0].append(py("d=%d i=%i u=%u x=%x X=%X o=%o\n", a, a, ua, ua, ua, ua))
        per_call[1].append(py("w=[%8d] l=[%-8d] z=[%08d] p=[%+d] s=[% d] h=[%hd] hh=[%hhd] hu=[%hu]\n",
                              a, a, a, a, a, h, hh, hu))
        # C's # flag: no 0x for a zero, octal's prefix a single 0 (Python writes 0x0 and 0o17)
        hexalt = format(ua, "#x") if ua else "0"
        octal = "0" + format(ua, "o") if ua else "0"
        per_call[2].append(py("ld=%ld lld=%lld llu=%llu llx=%llx zu=%zu #x=", q, q, q & M64, q & M64, q & M64)
                           + hexalt + " #o=" + octal + py(" .5d=%.5d\n", a))
        per_call[3].append(py("f=%f F=%F e=%e E=%E g=%g G=%G .3f=%.3f 12.4e=[%12.4e] -10.2f=[%-10.2f] #g=%#g "
                              "+f=%+f\n", f, f, d, d, d, d, d, d, d, d, f))
        per_call[4].append(py("c=%c s=%s .3s=%.3s 8s=[%8s] -8s=[%-8s] pct=%% star=[%*d] p=0x%x\n",
                              chr(ord("A") + t), "world", "world", "hello", "hello", 6, a, 0x1234))
    assert run.stdout == "".join(line for call in per_call for line in call)


@pytest.mark.parametrize("timing", MODES)
def test_order_divergence_and_loops(mod, timing):
    """Within a warp, printf calls come out in the order the warp ran them (under IPDOM the not-taken
    path of the branch first, here the even lanes), each call's lanes in lane order."""
    run = mod.k_order[1, 6](np.int32(2), timing=timing)
    code = run.program.code
    expected = [py("even %d\n", t) for t in range(0, 6, 2)] + [py("odd %d\n", t) for t in range(1, 6, 2)]
    expected += [py("t%d k%d\n", t, k) for k in range(2) for t in range(6)]
    assert run.stdout == "".join(expected), code.shape


@pytest.mark.parametrize("timing", MODES)
def test_vprintf_returns_the_number_of_conversions(gpu, mod, timing):
    out = gpu.zeros(8, np.int32)
    run = mod.k_count[1, 8](out, timing=timing)
    assert out.get().tolist() == [3] * 8          # "%d %d %s\n"
    assert run.stdout == py("%d %d %s\n", 1, 2, "x") * 8


def test_print_mode_writes_python_stdout_and_capture_does_not(capsys):
    printing = gpusim.GPU("h100-sxm", sms=1)
    run = printing.load(HERE / "printf.ptx").k_hello[1, 2](timing=False)
    assert capsys.readouterr().out == run.stdout == "block 0 thread 0\nblock 0 thread 1\n"
    quiet = gpusim.GPU("h100-sxm", sms=1, printf="capture")
    run = quiet.load(HERE / "printf.ptx").k_hello[1, 2](timing=False)
    assert capsys.readouterr().out == "" and run.stdout.count("\n") == 2
    with pytest.raises(ConfigError, match="printf must be one of"):
        gpusim.GPU("h100-sxm", printf="loud")


@pytest.mark.parametrize("timing", MODES)
def test_records_past_the_buffer_are_dropped(timing, capsys):
    """A k_hello record is a 32-byte header and the bytes from its argument pointer (the start of the kernel's
    8-byte local depot) to the end of the thread's local memory: the depot's 16-byte frame and vprintf's 24-byte
    parameter area after it, 40 bytes. 72-byte records: a 150-byte buffer holds two of the eight."""
    gpu = gpusim.GPU("h100-sxm", sms=1, printf="capture", printf_fifo_bytes=150)
    run = gpu.load(HERE / "printf.ptx").k_hello[1, 8](timing=timing)
    assert run.stdout == "block 0 thread 0\nblock 0 thread 1\n"
    assert run.printf_dropped == 6
    assert "6 printf records" in capsys.readouterr().err


def test_mismatched_formats_do_not_fail():
    one_int = struct.pack("<i", 7)
    assert format_record(b"%d %d\n", one_int, None) == "7 <gpusim: no argument left for '%d'>\n"
    assert format_record(b"%y|%Lf\n", one_int, None) == (
        "<gpusim: unsupported printf conversion '%y'>|<gpusim: unsupported printf conversion '%Lf'>\n")
    bad_pointer = struct.pack("<Q", 0xDEAD)
    assert "not in global memory" in format_record(b"%s", bad_pointer, None)
    assert format_record(b"%s|%p", struct.pack("<QQ", 0, 0), None) == "(null)|(nil)"
    many = struct.pack("<33i", *range(33))
    assert format_record(b"%d " * 33, many, None) == " ".join(map(str, range(32))) + " %d "


def test_gpusim_run_shows_the_output(capsys):
    from gpusim.cli import main

    assert main(["run", str(HERE / "printf.ptx"), "--kernel", "k_hello", "--grid", "2", "--block", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("block 0 thread 0\nblock 0 thread 1\nblock 1 thread 0\nblock 1 thread 1\n")
