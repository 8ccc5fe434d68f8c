"""The engine's compile options, in one place.

Every compiled engine function is cached on disk (``cache=True``) and compiled without numba's runtime
(``_nrt=False``): with it, numba reference-counts each array argument with atomic operations, which
costs more than most of these functions do. Functions that only compiled code calls are built without
the CPython and C-callable wrappers numba makes by default: a wrapper that unboxes a namedtuple of
dozens of arrays is a large piece of code, and leaving the wrappers out cuts the first (cold) compile
of a timed launch by about a fifth. Functions that tests or Python code call directly keep plain
``njit(cache=True, _nrt=False)``.
"""

from __future__ import annotations

from numba import njit

COMPILED_ONLY = {"cache": True, "_nrt": False, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def compiled_only(function=None, **options):
    """``@compiled_only`` or ``@compiled_only(inline="always")``: an engine function called only from
    compiled code (no Python entry point)."""
    decorator = njit(**{**COMPILED_ONLY, **options})
    return decorator if function is None else decorator(function)
