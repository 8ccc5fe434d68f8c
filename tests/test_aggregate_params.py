"""By-value struct and array parameters (tests/ptx/params/aggregates.cu, compiled by nvcc): each takes
bytes, numpy structured scalars and arrays, and ctypes objects of the parameter's size, laid out as the
C struct; anything else is one LaunchError naming the parameter, its PTX size and alignment and what was
passed. The expected values are the fields as written on the host."""

from __future__ import annotations

import ctypes
import struct
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import LaunchError

PTX = Path(__file__).parent / "ptx" / "params" / "aggregates.ptx"


class Vec4(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float), ("z", ctypes.c_float), ("w", ctypes.c_float)]


class Mixed(ctypes.Structure):      # C's layout: int, 4 padding bytes, double, char, 7 padding bytes
    _fields_ = [("n", ctypes.c_int), ("scale", ctypes.c_double), ("tag", ctypes.c_char)]


class Empty(ctypes.Structure):
    _fields_ = []


MIXED = np.dtype([("n", np.int32), ("scale", np.float64), ("tag", np.int8)], align=True)


@pytest.fixture(scope="module")
def module():
    gpu = gpusim.GPU("h100-sxm", sms=1)
    return gpu, gpu.load(PTX)


def _run(module, name, value, out_dtype, n, timing=False):
    gpu, mod = module
    out = gpu.zeros(n, out_dtype)
    gpu.launch(mod[name], 1, 32, [value, out], timing=timing)
    return out.get()


@pytest.mark.parametrize("value", [
    None, Empty(), b"", b"\0", 0,
], ids=["None", "ctypes-empty", "empty-bytes", "one-byte", "int-0"])
def test_an_empty_struct_takes_what_a_user_passes(module, value):
    np.testing.assert_array_equal(_run(module, "with_empty", value, np.float32, 32), 1.0 + np.arange(32))


VEC = (1.5, -2.0, 3.25, 1e-3)


@pytest.mark.parametrize("make", [
    lambda: struct.pack("<4f", *VEC),
    lambda: bytearray(struct.pack("<4f", *VEC)),
    lambda: np.array(VEC, np.float32),
    lambda: np.array([VEC], dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("w", "<f4")])[0],
    lambda: Vec4(*VEC),
    lambda: (ctypes.c_float * 4)(*VEC),
], ids=["bytes", "bytearray", "ndarray", "np.void", "ctypes-struct", "ctypes-array"])
@pytest.mark.parametrize("timing", [False, True])
def test_an_aligned_struct(module, make, timing):
    np.testing.assert_array_equal(_run(module, "with_vec4", make(), np.float32, 4, timing), np.float32(VEC))


@pytest.mark.parametrize("make", [
    lambda: Mixed(-7, 0.125, b"A"),
    lambda: np.array([(-7, 0.125, 65)], dtype=MIXED)[0],
    lambda: struct.pack("<i4xdb7x", -7, 0.125, 65),
], ids=["ctypes", "numpy-aligned", "bytes"])
def test_a_struct_with_padding(module, make):
    np.testing.assert_array_equal(_run(module, "with_mixed", make(), np.float64, 3), [-7.0, 0.125, 65.0])


def test_a_struct_holding_an_array(module):
    entries = np.array([3, -1, 400, -32768, 7], np.int16)
    np.testing.assert_array_equal(_run(module, "with_table", entries, np.int32, 5), entries)
    np.testing.assert_array_equal(_run(module, "with_table", (ctypes.c_short * 5)(*entries), np.int32, 5), entries)


@pytest.mark.parametrize("name, value, match", [
    ("with_vec4", np.zeros(3, np.float32), r"'with_vec4_param_0'.*16-byte aggregate aligned to 16 "
     r"\(\.param \.align 16 \.b8 with_vec4_param_0\[16\]\).*numpy array of dtype float32 of 12 bytes"),
    ("with_mixed", np.zeros(1, dtype=[("n", "<i4"), ("scale", "<f8"), ("tag", "i1")])[0],
     r"24-byte aggregate aligned to 8.*13 bytes.*align=True"),
    ("with_vec4", 3.0, r"got a float \(3\.0\); pass bytes, a numpy structured scalar or array, or a ctypes"),
    ("with_vec4", Mixed(), r"ctypes Mixed of 24 bytes"),
    ("with_empty", 300, r"1-byte aggregate aligned to 1"),
    ("with_table", np.arange(10, dtype=np.int16)[::2], r"10-byte aggregate.*numpy array"),
])
def test_a_wrong_value_names_the_parameter_and_what_was_passed(module, name, value, match):
    gpu, mod = module
    with pytest.raises(LaunchError, match=match):
        gpu.launch(mod[name], 1, 32, [value, gpu.zeros(8, np.float64)])
