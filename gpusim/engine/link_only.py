"""Compiled-only engine functions are built as LLVM IR for their callers, never as machine code.

numba finalizes every compiled function as if Python were about to call it: it links in the IR of
all its callees, optimizes that whole module and emits machine code for it. A caller then links the
callee's (already linked) module into its own and does the same again, so a function deep in the
call tree is optimized and turned into machine code once per ancestor: the timed loop's cold compile
emitted ~140 k LLVM instructions' worth of machine code for a loop whose own module is ~35 k.

A function only compiled code calls (``jit.compiled_only``) is never run on its own, so here its
library only links its callees' IR in and, if ``OPTIMIZE_MODULES``, optimizes the module (exactly the
IR a caller received before, so the entry points' machine code is built from the same input); it
emits no machine code. The entry points and the functions Python also calls keep numba's library.

The slow path's subtree (``SLOW_PATH``: the functions the two loops reach only through ``step_warp``)
is linked but not optimized module by module (``unoptimized``): each of its ~170 libraries would
re-optimize all the IR linked into it, once per level of the call tree, and the entry point's module
optimization, which runs over the whole linked tree anyway, then does it once. The hot path
(``step_fast``, the issue, scheduling and memory timing functions) keeps its per-library
optimization, which its speed depends on.

Two details numba's finalization covered:

* A function's environment pointer (a global numba fills in after emitting the code) has no address
  until some module defining it is in the JIT. It is recorded, and set once an entry point's module,
  which defines the globals of every callee linked into it, has been emitted.
* The on-disk cache stores a library as object code plus the IR for linking. Such a library's "object
  code" is a tiny object that defines only its environment globals, which is what numba needs to
  rebuild it from the cache; a caller compiled later links the cached IR, as before.
"""

from __future__ import annotations

import importlib

from llvmlite import binding as ll
from numba.core import codegen, compiler, typed_passes
from numba.core.compiler_lock import require_global_compiler_lock
from numba.core.compiler_machinery import FunctionPass, LoweringPass, register_pass

from gpusim.engine import compile_cache

OPTIMIZE_MODULES = True
"""Optimize a compiled-only function's linked module as numba would (its callers then start from the
same IR as with numba's own library); skipping it saves more compile time but changes what the entry
points' optimizer starts from."""

SLOW_PATH = ("gpusim.engine.semantics.execute", "step_warp")
"""The root of the slow path (module, name): what the loops reach only through it is built unoptimized."""

LOOPS = (("gpusim.engine.sm.timing", "run_timed"), ("gpusim.engine.semantics.functional", "run_functional"))
"""The entry points whose other callees (and theirs) stay optimized library by library."""

_ENV_PREFIX = "_ZN08NumbaEnv"
_deferred_envs: dict = {}       # environment global name -> Environment, not yet given an address


LOOP_STEPS = ("scan_warps", "select_warp", "begin_issue", "finish_issue", "sm_next_event", "advance_clock")
"""The timed loop's steps (``timing.run_timed``): inlined into the loop, and linked unoptimized so that the
loop's module optimizes them in the loop's context, as one function (docs/design.md, "The timed loop as
units", for what this recovers of the single-function loop's speed)."""

INLINING = {"book_issue": "alwaysinline", "memory_timing": "alwaysinline", "state_to": "alwaysinline",
            **{step: "alwaysinline" for step in LOOP_STEPS},
            "two_level_admit": "noinline", "dispatch_block": "noinline", "release_block_barriers": "noinline"}
"""LLVM inlining attributes for functions whose inlining into the timed loop decides its speed. LLVM's
heuristic inlined ``book_issue`` (called for every issued instruction) until its body grew by the tensor
pipe's interval lookup and cp.async wait; then it stopped, and the ALU-bound case fell from 6.9 to 4.0 M
warp-instructions/s (benchmarks/bench_speed.py, idle machine). ``alwaysinline`` makes it 7.6 M/s; and the
timed loop's steps (``LOOP_STEPS``). Once the loop was split into those steps, the heuristic also stopped
inlining the memory unit's entry (``memory_timing``) and the warp-state change (``state_to``): the
memory-bound case fell to 0.87x of the single-function loop; inlined, 0.98x (docs/design.md)."""


_unoptimized: set | None = None


def _dispatcher(key):
    module, name = key
    return getattr(importlib.import_module(module), name)


def unoptimized() -> set:
    """The (module, qualname) of every function the loops reach only through ``SLOW_PATH``'s root."""
    global _unoptimized
    if _unoptimized is None:
        def key(dispatcher):
            return dispatcher.py_func.__module__, dispatcher.py_func.__qualname__

        root = _dispatcher(SLOW_PATH)
        slow = {key(d) for d in compile_cache.reachable(root)}
        for loop in LOOPS:
            for callee in compile_cache.callees(_dispatcher(loop)):
                if callee is not root:
                    slow -= {key(d) for d in compile_cache.reachable(callee)}
        _unoptimized = slow
    return _unoptimized


class _CodegenView:
    """The codegen, as a link-only library shows it to numba: ``set_env`` is deferred."""

    def __init__(self, codegen_):
        self._codegen = codegen_

    def __getattr__(self, name):
        return getattr(self._codegen, name)

    def set_env(self, env_name, env):
        _deferred_envs[env_name] = env


class LinkOnlyLibrary(codegen.JITCodeLibrary):
    """A code library finalized to linked (and optionally optimized) IR only, without machine code."""

    function_key: tuple = ("", "")     # the function's (module, qualname), set by ``UseLinkOnlyLibrary``

    @property
    def codegen(self):
        return _CodegenView(self._codegen)

    def finalize(self):
        require_global_compiler_lock()
        self._raise_if_finalized()
        seen = set()
        for library in self._linking_libraries:
            if library not in seen:
                seen.add(library)
                self._reload_init.update(library._reload_init)
                self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        short = self.name.rsplit(".", 1)[-1]
        if OPTIMIZE_MODULES and self.function_key not in unoptimized() and short not in LOOP_STEPS:
            self._optimize_final_module()
        if short in INLINING:
            for function in self._final_module.functions:
                if not function.is_declaration and short in function.name:
                    function.add_function_attribute(INLINING[short])
        self._final_module.verify()
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        self._finalized = True

    def get_pointer_to_function(self, name):
        self._ensure_finalized()
        return 0           # nothing here is callable from Python (no wrappers, no machine code)

    def serialize_using_object_code(self):
        self._ensure_finalized()
        envs = [gv.name for gv in self._final_module.global_variables if gv.name.startswith(_ENV_PREFIX)]
        stub = ll.parse_assembly("".join(f'@"{name}" = common global i8* null\n' for name in envs))
        stub.triple = self._final_module.triple
        stub.data_layout = self._final_module.data_layout
        return (self.name, "object", (self._codegen._tm.emit_object(stub),
                                      self._get_module_for_linking().as_bitcode()))


@register_pass(mutates_CFG=False, analysis_only=False)
class UseLinkOnlyLibrary(FunctionPass):
    """Before lowering: give the function a ``LinkOnlyLibrary`` (numba's lowering pass would make a
    machine-code one)."""

    _name = "gpusim_use_link_only_library"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        if state.library is None:
            state.library = LinkOnlyLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
            state.library.function_key = (state.func_id.modname, state.func_id.func_qualname)
            state.library.enable_object_caching()
        return False


@register_pass(mutates_CFG=False, analysis_only=False)
class SetDeferredEnvironments(LoweringPass):
    """After an entry point's machine code exists: give the environments of the link-only callees
    linked into it their addresses."""

    _name = "gpusim_set_deferred_environments"

    def __init__(self):
        LoweringPass.__init__(self)

    def run_pass(self, state):
        target_codegen = state.targetctx.codegen()
        for gv in state.library._final_module.global_variables:
            env = _deferred_envs.get(gv.name)
            if env is not None:
                target_codegen.set_env(gv.name, env)
        return False


class LinkOnlyPipeline(compiler.Compiler):
    """numba's nopython pipeline, building a ``LinkOnlyLibrary``."""

    def define_pipelines(self):
        pm = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.add_pass_after(UseLinkOnlyLibrary, typed_passes.NopythonTypeInference)
        pm.finalize()
        return [pm]


class EntryPipeline(compiler.Compiler):
    """numba's nopython pipeline, then the deferred environments of the callees linked in."""

    def define_pipelines(self):
        pm = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.add_pass_after(SetDeferredEnvironments, typed_passes.NativeLowering)
        pm.finalize()
        return [pm]
