"""The engine's compile options, in one place.

Every compiled engine function is cached on disk, in one per-user directory keyed by a hash of the
whole engine's source (``compile_cache``), and, except the two entry points
that allocate, compiled without numba's runtime (``_nrt=False``): with it, numba reference-counts each
array argument with atomic operations, which costs more than most of these functions do.

Functions that only compiled code calls (``compiled_only``) are built without the CPython and
C-callable wrappers numba makes by default: a wrapper that unboxes a namedtuple of dozens of arrays is
a large piece of code. Functions that tests or Python code call directly use ``engine_jit``.

Both compile one machine-code version per argument *type*, never per constant value. By default numba
types a constant argument in a call between compiled functions as a literal (``Literal[int](0)``) and
compiles a separate version of the callee, and of the callees it passes that constant on to, for each
value: the engine's first (cold) compile built 294 versions of 182 functions that way. With literals
folded into their plain types, each function is compiled once per real signature; LLVM still folds the
constants wherever it inlines a callee.

Under ``NUMBA_DISABLE_JIT=1`` both decorators return the plain Python function (and ``bits`` its
intrinsics' Python twins), so the engine can be stepped through in a debugger.

A function only compiled code calls is built as LLVM IR for its callers and never turned into
machine code of its own (``link_only``): numba would otherwise emit each callee's machine code again
inside every caller's module on the way up the call tree.
"""

from __future__ import annotations

from numba import njit
from numba.core import config as numba_config
from numba.core import types

from gpusim.engine import compile_cache
from gpusim.engine.link_only import EntryPipeline, LinkOnlyPipeline

ENGINE = {"cache": True, "_nrt": False, "pipeline_class": EntryPipeline}
COMPILED_ONLY = {**ENGINE, "no_cpython_wrapper": True, "no_cfunc_wrapper": True,
                 "pipeline_class": LinkOnlyPipeline}


def _one_version_per_type(dispatcher):
    """Make calls from compiled code resolve ``dispatcher`` with literal argument types made plain."""
    resolve = dispatcher.get_call_template

    def get_call_template(args, kws):
        return resolve(tuple(types.unliteral(a) for a in args), {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def _decorate(base, function, options):
    options = {**base, **options}
    cache = options.pop("cache")          # the engine cache (compile_cache), not numba's in-tree one
    decorator = njit(**options)

    def build(fn):
        if getattr(numba_config, "DISABLE_JIT", False):   # NUMBA_DISABLE_JIT=1: the Python function, for a debugger
            return fn
        return compile_cache.register(_one_version_per_type(decorator(fn)), cache)

    return build if function is None else build(function)


def engine_jit(function=None, **options):
    """``@engine_jit`` or ``@engine_jit(inline="always")``: an engine function Python code may call too.
    ``_nrt=True`` for an entry point that allocates arrays."""
    return _decorate(ENGINE, function, options)


def compiled_only(function=None, **options):
    """``@compiled_only`` or ``@compiled_only(inline="always")``: an engine function called only from
    compiled code (no Python entry point)."""
    return _decorate(COMPILED_ONLY, function, options)
