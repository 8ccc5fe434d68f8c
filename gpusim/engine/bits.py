"""Bit-level primitives for the compiled engine: reinterpretation and counting.

Registers hold raw bit patterns (uint64). The engine needs to look at those bits
as IEEE floats and back without any conversion, and to count bits, inside
numba's nopython mode. Each primitive here is an LLVM instruction emitted
through ``numba.extending.intrinsic`` (``bitcast``, ``llvm.ctpop``,
``llvm.ctlz``, ``llvm.cttz``, ``llvm.fma``), so it costs one machine instruction and allocates
nothing. The ``@engine_jit`` wrappers accept any integer or float argument and cast it
to the width the intrinsic expects.

``fused_multiply_add`` is ``llvm.fma.f64``: one rounding (round to nearest
even) of the exact ``a * b + c``. LLVM lowers it to the FMA instruction where
the host has one and to the C library's correctly rounded ``fma`` otherwise.

Simplifications: none; these are exact. Under ``NUMBA_DISABLE_JIT=1`` each intrinsic is replaced by an
exact Python twin (end of this module), so the engine can be stepped through in a debugger.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from llvmlite import ir
from numba.core import config as numba_config
from numba.core import types
from numba.extending import intrinsic

from gpusim.engine.jit import compiled_only, engine_jit


@intrinsic
def _bitcast_u64_to_f64(typingctx, value):
    signature = types.float64(types.uint64)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return signature, codegen


@intrinsic
def _bitcast_f64_to_u64(typingctx, value):
    signature = types.uint64(types.float64)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return signature, codegen


@intrinsic
def _bitcast_u32_to_f32(typingctx, value):
    signature = types.float32(types.uint32)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.FloatType())

    return signature, codegen


@intrinsic
def _bitcast_f32_to_u32(typingctx, value):
    signature = types.uint32(types.float32)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return signature, codegen


@intrinsic
def _ctpop_u64(typingctx, value):
    signature = types.uint64(types.uint64)

    def codegen(context, builder, sig, args):
        function = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(function, [args[0]])

    return signature, codegen


@intrinsic
def _ctlz_u64(typingctx, value):
    signature = types.uint64(types.uint64)

    def codegen(context, builder, sig, args):
        function = builder.module.declare_intrinsic("llvm.ctlz", [ir.IntType(64), ir.IntType(1)])
        # is_zero_poison = false: ctlz(0) is defined and equals 64
        return builder.call(function, [args[0], ir.Constant(ir.IntType(1), 0)])

    return signature, codegen


@intrinsic
def _cttz_u64(typingctx, value):
    signature = types.uint64(types.uint64)

    def codegen(context, builder, sig, args):
        function = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(64), ir.IntType(1)])
        # is_zero_poison = false: cttz(0) is defined and equals 64
        return builder.call(function, [args[0], ir.Constant(ir.IntType(1), 0)])

    return signature, codegen


@intrinsic
def _fma_f64(typingctx, a, b, c):
    signature = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, sig, args):
        double = ir.DoubleType()
        function_type = ir.FunctionType(double, [double, double, double])
        function = builder.module.declare_intrinsic("llvm.fma", [double], function_type)
        return builder.call(function, list(args))

    return signature, codegen


@engine_jit
def f64_from_bits(bits):
    """The float64 whose IEEE bits are ``bits`` (64 bits)."""
    return _bitcast_u64_to_f64(np.uint64(bits))


@engine_jit
def bits_from_f64(value):
    """The IEEE bits of float64 ``value`` as uint64."""
    return _bitcast_f64_to_u64(np.float64(value))


@engine_jit
def f32_from_bits(bits):
    """The float32 whose IEEE bits are the low 32 bits of ``bits``."""
    return _bitcast_u32_to_f32(np.uint32(np.uint64(bits) & np.uint64(0xFFFFFFFF)))


@engine_jit
def bits_from_f32(value):
    """The IEEE bits of float32 ``value`` as uint64 (zero-extended)."""
    return np.uint64(_bitcast_f32_to_u32(np.float32(value)))


@engine_jit
def popcount64(bits):
    """Number of one bits in a uint64."""
    return _ctpop_u64(np.uint64(bits))


@engine_jit
def leading_zeros64(bits):
    """Number of leading zero bits in a uint64 (64 for zero)."""
    return _ctlz_u64(np.uint64(bits))


@compiled_only
def trailing_zeros64(bits):
    """Number of trailing zero bits in a uint64 (64 for zero): the index of the lowest one bit."""
    return _cttz_u64(np.uint64(bits))


@engine_jit
def fused_multiply_add(a, b, c):
    """``a * b + c`` on float64 with a single round-to-nearest-even rounding."""
    return _fma_f64(np.float64(a), np.float64(b), np.float64(c))


@intrinsic
def _fma_f32(typingctx, a, b, cc):
    signature = types.float32(types.float32, types.float32, types.float32)

    def codegen(context, builder, sig, args):
        single = ir.FloatType()
        function_type = ir.FunctionType(single, [single, single, single])
        function = builder.module.declare_intrinsic("llvm.fma", [single], function_type)
        return builder.call(function, list(args))

    return signature, codegen


@compiled_only
def fused_multiply_add_f32(a, b, cc):
    """Single-precision fused multiply-add, one rounding (llvm.fma.f32)."""
    return _fma_f32(np.float32(a), np.float32(b), np.float32(cc))


@engine_jit(inline="always")
def quotient(value, divisor):
    """``value // divisor`` for a positive ``divisor``: a shift when it is a power of two (line and sector
    sizes always are), which the hot paths need instead of a 64-bit division."""
    if divisor & (divisor - 1) == 0:
        return value >> np.int64(trailing_zeros64(divisor))
    return value // divisor


# ---------------------------------------------------------------------------------------------------
# NUMBA_DISABLE_JIT=1 (stepping through the engine in a debugger): the intrinsics above exist only as
# LLVM instructions, so un-jitted they are replaced by exact Python equivalents of the same results.


def _python_fma(a: float, b: float, c: float) -> float:
    """``a * b + c`` rounded once (the exact sum as a fraction, then one correctly rounded division)."""
    if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
        return float(np.float64(a) * np.float64(b) + np.float64(c))
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if exact == 0:
        return float(np.float64(a) * np.float64(b) + np.float64(c))     # the sign of a zero sum
    return float(exact)


def _python_fma_f32(a, b, c) -> np.float32:
    """Single-precision ``a * b + c`` rounded once to float32 (nearest, ties to even)."""
    if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
        return np.float32(np.float32(a) * np.float32(b) + np.float32(c))
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if exact == 0:
        return np.float32(np.float32(a) * np.float32(b) + np.float32(c))
    near = np.float32(float(exact))
    best = near
    for other in (np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf))):
        if not np.isfinite(other):
            continue
        d_best, d_other = abs(Fraction(float(best)) - exact), abs(Fraction(float(other)) - exact)
        if d_other < d_best or (d_other == d_best and int(other.view(np.uint32)) % 2 == 0):
            best = other
    return best


_MASK64 = (1 << 64) - 1


def _python_ctpop(value):
    return np.uint64(bin(int(value) & _MASK64).count("1"))


def _python_ctlz(value):
    return np.uint64(64 - (int(value) & _MASK64).bit_length())


def _python_cttz(value):
    bits = int(value) & _MASK64
    return np.uint64(64 if bits == 0 else (bits & -bits).bit_length() - 1)


PYTHON_TWINS = {
    "_bitcast_u64_to_f64": lambda value: np.uint64(value).view(np.float64),
    "_bitcast_f64_to_u64": lambda value: np.float64(value).view(np.uint64),
    "_bitcast_u32_to_f32": lambda value: np.uint32(value).view(np.float32),
    "_bitcast_f32_to_u32": lambda value: np.float32(value).view(np.uint32),
    "_ctpop_u64": _python_ctpop,
    "_ctlz_u64": _python_ctlz,
    "_cttz_u64": _python_cttz,
    "_fma_f64": lambda a, b, c: np.float64(_python_fma(a, b, c)),
    "_fma_f32": _python_fma_f32,
}
"""The intrinsic each replaces (by name) when numba's JIT is disabled: same arguments, same result."""

if getattr(numba_config, "DISABLE_JIT", False):
    globals().update(PYTHON_TWINS)
