"""The engine's compile decorators: one machine-code version per argument type, never per constant."""

from __future__ import annotations

from numba.core import types

from gpusim.engine.jit import compiled_only, engine_jit


# cache=False: a version loaded from numba's on-disk cache would not list the callee's compiled versions
@compiled_only(cache=False)
def _scaled(value, factor, negate):
    result = value * factor
    return -result if negate else result


@engine_jit(cache=False)
def _callers(value):
    return _scaled(value, 3, False) + _scaled(value, 5, True) + _scaled(value, value, False)


def _has_literal(signature) -> bool:
    return any(isinstance(arg, types.Literal) for arg in signature)


def test_constant_arguments_do_not_make_versions():
    value = 7
    assert _callers(value) == value * 3 - value * 5 + value * value
    signatures = _scaled.signatures
    assert len(signatures) == 1, signatures
    assert not _has_literal(signatures[0])


def test_plain_numba_would_make_a_version_per_constant():
    """The control: without the decorator's typing rule numba compiles the callee once per literal."""
    from numba import njit

    callee = njit(cache=False)(_scaled.py_func)

    @njit(cache=False)
    def callers(value):
        return callee(value, 3, False) + callee(value, 5, True)

    callers(7)
    assert any(_has_literal(signature) for signature in callee.signatures)
