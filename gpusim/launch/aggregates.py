"""Structs and arrays passed by value, as the CUDA ABI lays them out in the parameter buffer.

What the ABI does: nvcc declares a by-value struct or array parameter as bytes with the type's alignment,
``.param .align 16 .b8 k_param_0[16]`` for ``struct __align__(16) { float x, y, z, w; }``, and copies the
host object's bytes into the parameter buffer at that alignment. An empty struct is one byte
(``.param .align 1 .b8 k_param_0[1]``: C++ gives it size 1).

What is modelled: an aggregate parameter takes what a user would naturally pass: ``bytes``/``bytearray``/
``memoryview``, a numpy structured scalar (``np.void``, ``np.record``) or a C-contiguous array, or a ctypes
structure, union or array, each of exactly the parameter's size; an empty struct also takes ``None``,
an empty ctypes structure or ``b""`` (its one byte is zero) and, for code written against earlier
gpusim versions, an int 0..255. Anything else is a LaunchError naming the parameter, its PTX size and
alignment, and what was passed (its type and size; for a numpy structured dtype of the wrong size, that
``np.dtype(..., align=True)`` gives C's layout).
"""

from __future__ import annotations

import ctypes

import numpy as np

from gpusim.errors import LaunchError


def _ctypes_object(value) -> bool:
    return isinstance(value, ctypes.Structure | ctypes.Union | ctypes.Array)


def _raw(value) -> bytes | None:
    """The bytes of a natural aggregate value, None when ``value`` is not one."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, np.void):
        return value.tobytes()
    if isinstance(value, np.ndarray):
        if not value.flags.c_contiguous:
            return None
        return value.tobytes()
    if _ctypes_object(value):
        return bytes(memoryview(value).cast("B")) if ctypes.sizeof(value) else b""
    return None


def _described(value, raw: bytes | None) -> str:
    if isinstance(value, np.void | np.ndarray):
        kind = f"numpy {'structured scalar' if isinstance(value, np.void) else 'array'} of dtype {value.dtype}"
    elif _ctypes_object(value):
        kind = f"ctypes {type(value).__name__}"
    else:
        kind = type(value).__name__
    return f"a {kind} of {len(raw)} bytes" if raw is not None else f"a {kind} ({value!r:.60})"


def aggregate_bytes(where: str, slot, value) -> bytes:
    """The ``slot.size`` bytes of ``value`` for an aggregate parameter, or a LaunchError (see above)."""
    raw = _raw(value)
    empty_struct = slot.size == 1 and slot.align == 1
    if empty_struct and (value is None or raw == b""):
        return b"\0"
    if empty_struct and isinstance(value, int | np.integer) and not isinstance(value, bool) and 0 <= value <= 255:
        return bytes([int(value)])
    if raw is not None and len(raw) == slot.size:
        return raw
    declared = f".param .align {slot.align} .b8 {slot.name}[{slot.size}]"
    hint = ""
    if isinstance(value, np.void | np.ndarray) and value.dtype.names and not value.dtype.isalignedstruct:
        hint = "; a numpy structured dtype is packed unless made with np.dtype(..., align=True), C's layout"
    elif raw is None:
        hint = ("; pass bytes, a numpy structured scalar or array, or a ctypes structure of "
                f"{slot.size} bytes")
    raise LaunchError(f"{where}: a {slot.size}-byte aggregate aligned to {slot.align} ({declared}) needs "
                      f"{slot.size} bytes, got {_described(value, raw)}{hint}")
