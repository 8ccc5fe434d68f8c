"""Launch checks and argument packing, as the CUDA runtime does them.

``grid``/``block`` become 3-tuples and are checked against the config's limits;
arguments are checked against the kernel's ``.param`` list (count, pointer or
value, range) and packed into the parameter buffer; resource needs (threads,
registers, shared memory) go through the occupancy rules, and a block that
cannot fit is CUDA's "too many resources requested for launch".
"""

from __future__ import annotations

import struct

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch.occupancy import occupancy
from gpusim.arch.tensor_map_layout import TMAP_BYTES
from gpusim.errors import LaunchError, TensorMapError
from gpusim.launch.aggregates import aggregate_bytes
from gpusim.launch.device_memory import DeviceArray
from gpusim.launch.tensor_map import TensorMap
from gpusim.ptx.lower_tensor import check_tensor_support

_INT_RANGES = {
    "u8": (0, 0xFF), "s8": (-0x80, 0x7F), "b8": (-0x80, 0xFF),
    "u16": (0, 0xFFFF), "s16": (-0x8000, 0x7FFF), "b16": (-0x8000, 0xFFFF),
    "u32": (0, 0xFFFFFFFF), "s32": (-0x80000000, 0x7FFFFFFF), "b32": (-0x80000000, 0xFFFFFFFF),
    "u64": (0, (1 << 64) - 1), "s64": (-(1 << 63), (1 << 63) - 1), "b64": (-(1 << 63), (1 << 64) - 1),
}


def dims3(value, what: str) -> tuple[int, int, int]:
    """An int or a 1-3 tuple as (x, y, z)."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        value = (int(value),)
    try:
        if not isinstance(value, tuple | list):
            raise TypeError
        if any(not isinstance(v, int | np.integer) or isinstance(v, bool | np.bool_) for v in value):
            raise TypeError
        items = [int(v) for v in value]
    except (TypeError, ValueError):
        raise LaunchError(f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}") from None
    if not 1 <= len(items) <= 3:
        raise LaunchError(f"{what} must have 1 to 3 dimensions, got {len(items)}")
    if any(v < 1 for v in items):
        raise LaunchError(f"invalid configuration argument: every {what} dimension must be >= 1, got {tuple(items)}")
    while len(items) < 3:
        items.append(1)
    return items[0], items[1], items[2]


def check_geometry(config, grid: tuple, block: tuple) -> None:
    threads = block[0] * block[1] * block[2]
    for i, axis in enumerate("xyz"):
        if block[i] > config.max_block_dims[i]:
            raise LaunchError(f"invalid configuration argument: block.{axis} = {block[i]} exceeds the limit "
                              f"{config.max_block_dims[i]}")
        if grid[i] > config.max_grid_dims[i]:
            raise LaunchError(f"invalid configuration argument: grid.{axis} = {grid[i]} exceeds the limit "
                              f"{config.max_grid_dims[i]}")
    if threads > config.max_threads_per_block:
        raise LaunchError(f"too many resources requested for launch: {threads} threads per block, the limit "
                          f"is {config.max_threads_per_block}")


def pack_args(program, args: list, heap=None) -> np.ndarray:
    """The parameter buffer for ``args`` (bytes, padded to 8); ``heap``: the launching GPU's (a tensor map
    must be over one of its live arrays)."""
    params = program.params
    if len(args) != len(params):
        names = ", ".join(f"{p.name}: .{p.type}" for p in params)
        raise LaunchError(f"kernel '{program.name}' takes {len(params)} arguments ({names}), got {len(args)}")
    buffer = bytearray(max(8, (program.param_bytes + 7) // 8 * 8))
    for index, (slot, value) in enumerate(zip(params, args, strict=True)):
        raw = _arg_bytes(program.name, index, slot, value, heap)
        buffer[slot.offset:slot.offset + len(raw)] = raw
    return np.frombuffer(bytes(buffer), dtype=np.uint8).copy()


def _arg_bytes(kernel: str, index: int, slot, value, heap=None) -> bytes:
    where = f"argument {index} ('{slot.name}', .param .{slot.type}) of kernel '{kernel}'"
    if isinstance(value, TensorMap):
        return _tensor_map_bytes(where, slot, value, heap)
    type_code = c.TYPE_CODES.get(slot.type)
    if type_code is None or slot.size != c.TYPE_BYTES[type_code] or getattr(slot, "aggregate", False):
        return aggregate_bytes(where, slot, value)
    if isinstance(value, DeviceArray):
        if slot.size != 8:
            raise LaunchError(f"{where}: a DeviceArray passes a 64-bit pointer, but the parameter is "
                              f"{slot.size * 8}-bit")
        return struct.pack("<Q", value.ptr)
    if c.TYPE_FLOAT[type_code]:
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise LaunchError(f"{where}: expected a number, got {type(value).__name__}")
        if type_code == c.T_F32:
            return struct.pack("<f", np.float32(value).item())
        if type_code == c.T_F64:
            return struct.pack("<d", float(value))
        return np.float16(value).tobytes()
    if isinstance(value, float | np.floating) or isinstance(value, bool) or \
            not isinstance(value, int | np.integer):
        raise LaunchError(f"{where}: expected an integer, got {type(value).__name__} {value!r}")
    low, high = _INT_RANGES[slot.type] if slot.type in _INT_RANGES else (0, (1 << 64) - 1)
    value = int(value)
    if not low <= value <= high:
        raise LaunchError(f"{where}: {value} is out of range for .{slot.type} [{low}, {high}]")
    return (value & ((1 << (8 * slot.size)) - 1)).to_bytes(slot.size, "little")


def _tensor_map_bytes(where: str, slot, tmap: TensorMap, heap) -> bytes:
    """A TensorMap goes to a ``.param .align 64|128 .b8 NAME[128]`` parameter (``const __grid_constant__
    CUtensorMap``: 64-byte aligned, 128 bytes), over a live array of the launching GPU."""
    if not (getattr(slot, "aggregate", False) and slot.type == "b8" and slot.size == TMAP_BYTES
            and slot.align >= 64):
        declared = f".param .align {slot.align} .{slot.type} {slot.name}" + (f"[{slot.size}]" if getattr(
            slot, "aggregate", False) else "")
        raise TensorMapError(f"{where}: a TensorMap is passed to a .param .align 64 .b8 NAME[128] parameter "
                             f"(const __grid_constant__ CUtensorMap), not to {declared}")
    if heap is not None:
        tmap.check_usable(heap, where)
    return tmap.encode()


def check_resources(config, program, threads_per_block: int, regs_per_thread: int, shared_bytes: int):
    """The occupancy of a launch; LaunchError when a block cannot run at all."""
    check_tensor_support(program, config)     # tensor instructions this GPU lacks (issue 14)
    total_shared = program.dynamic_shared_offset + shared_bytes if shared_bytes else program.shared_static_bytes
    if total_shared > config.max_shared_bytes_per_block:
        raise LaunchError(f"too many resources requested for launch: kernel '{program.name}' needs "
                          f"{total_shared} bytes of shared memory per block, the limit is "
                          f"{config.max_shared_bytes_per_block}")
    if regs_per_thread > config.max_registers_per_thread:
        raise LaunchError(f"too many resources requested for launch: {regs_per_thread} registers per thread, "
                          f"the limit is {config.max_registers_per_thread}")
    # the reserved shared memory cooperative groups use is the driver's, which occupancy already counts
    occ = occupancy(config, threads_per_block=threads_per_block, regs_per_thread=regs_per_thread,
                    shared_bytes=total_shared - getattr(program, "reserved_shared_bytes", 0))
    if occ.blocks_per_sm == 0:
        raise LaunchError(f"too many resources requested for launch: kernel '{program.name}' with "
                          f"{threads_per_block} threads x {regs_per_thread} registers and {total_shared} bytes "
                          f"of shared memory per block does not fit on an SM (limited by {occ.limiter})")
    return occ, total_shared


MAX_TRACE_ROWS = 100_000_000
"""The largest ``trace=N`` capacity (rows per trace table; ~176 bytes a row)."""
MAX_WARP_INSTRUCTIONS = 1 << 62
MAX_OPTION_INT = 1 << 31
"""Sanity bound of ``shared_bytes`` and ``regs`` before the config's own limits are applied."""


def _is_int(value) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def check_launch_options(config, program, args, shared_bytes, *, timing, regs, trace, max_warp_instructions):
    """Type, range and finiteness of every launch option, before anything is allocated or compiled code
    runs; returns ``(args as a list, shared_bytes as an int)``. ``regs`` is checked by
    ``Kernel.registers_per_thread`` and the occupancy rules, grid and block by ``dims3``/``check_geometry``.
    Returns ``(args as a list, shared_bytes as an int, timing as a bool, trace as a bool or an int)``."""
    if not isinstance(args, list | tuple):
        raise LaunchError(f"args must be a list or tuple of the kernel's arguments, got {type(args).__name__}")
    # upper limits against the config are check_resources' ("too many resources requested for launch")
    if not _is_int(shared_bytes) or not 0 <= int(shared_bytes) <= MAX_OPTION_INT:
        raise LaunchError(f"shared_bytes (dynamic shared memory per block) must be a non-negative int, "
                          f"got {shared_bytes!r}")
    if not isinstance(timing, bool | np.bool_):
        raise LaunchError(f"timing must be True or False, got {timing!r}")
    if regs is not None and (not _is_int(regs) or not 1 <= int(regs) <= MAX_OPTION_INT):
        raise LaunchError(f"regs must be a positive int (registers per thread), got {regs!r}")
    if not isinstance(trace, bool | np.bool_) and not (_is_int(trace) and 1 <= int(trace) <= MAX_TRACE_ROWS):
        raise LaunchError(f"trace must be True, False or a row capacity from 1 to {MAX_TRACE_ROWS}, "
                          f"got {trace!r}")
    if max_warp_instructions is not None and not (
            _is_int(max_warp_instructions) and 1 <= int(max_warp_instructions) <= MAX_WARP_INSTRUCTIONS):
        raise LaunchError(f"max_warp_instructions must be None or an int from 1 to {MAX_WARP_INSTRUCTIONS}, "
                          f"got {max_warp_instructions!r}")
    trace = bool(trace) if isinstance(trace, bool | np.bool_) else int(trace)
    return list(args), int(shared_bytes), bool(timing), trace
