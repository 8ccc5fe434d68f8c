"""The private numba internals gpusim's engine build relies on, checked one by one.

``gpusim/engine/link_only.py`` (compiled-only functions built as linked IR), ``compile_cache.py`` (the
per-user engine cache, the compile notice) and ``jit.py`` (one machine-code version per argument type)
subclass or override numba internals that are not public API and change between numba releases.
``pyproject.toml`` pins numba and llvmlite to the minor series these hooks were built and tested on;
this file is what to run before widening that pin: every hook is listed with the gpusim module that
relies on it, and a change in a new numba fails naming that hook, not deep inside a cold compile.
"""

from __future__ import annotations

import inspect
import tomllib
from pathlib import Path

import llvmlite
import numba
import numpy as np
import pytest
from numba.core import caching, codegen, compiler, compiler_machinery, dispatcher, event, registry, typed_passes

ROOT = Path(__file__).resolve().parent.parent

# (owner, attribute, parameters of its signature or None for a non-callable, the gpusim module relying on it)
METHODS = [
    (codegen.JITCodeLibrary, "__init__", ["self", "codegen", "name"], "engine/link_only.py LinkOnlyLibrary"),
    (codegen.JITCodeLibrary, "finalize", ["self"], "engine/link_only.py LinkOnlyLibrary.finalize (overridden)"),
    (codegen.JITCodeLibrary, "_raise_if_finalized", ["self"], "engine/link_only.py LinkOnlyLibrary.finalize"),
    (codegen.JITCodeLibrary, "_get_module_for_linking", ["self"], "engine/link_only.py LinkOnlyLibrary.finalize"),
    (codegen.JITCodeLibrary, "_optimize_final_module", ["self"], "engine/link_only.py LinkOnlyLibrary.finalize"),
    (codegen.JITCodeLibrary, "_finalize_dynamic_globals", ["self"], "engine/link_only.py LinkOnlyLibrary.finalize"),
    (codegen.JITCodeLibrary, "_verify_declare_only_symbols", ["self"],
     "engine/link_only.py LinkOnlyLibrary.finalize"),
    (codegen.JITCodeLibrary, "_ensure_finalized", ["self"], "engine/link_only.py LinkOnlyLibrary"),
    (codegen.JITCodeLibrary, "get_pointer_to_function", ["self", "name"],
     "engine/link_only.py LinkOnlyLibrary.get_pointer_to_function (overridden)"),
    (codegen.JITCodeLibrary, "serialize_using_object_code", ["self"],
     "engine/link_only.py LinkOnlyLibrary.serialize_using_object_code (overridden)"),
    (codegen.JITCodeLibrary, "enable_object_caching", ["self"], "engine/link_only.py UseLinkOnlyLibrary"),
    (codegen.JITCPUCodegen, "set_env", ["self", "env_name", "env"],
     "engine/link_only.py _CodegenView.set_env / SetDeferredEnvironments"),
    (compiler.Compiler, "define_pipelines", ["self"], "engine/link_only.py LinkOnlyPipeline / EntryPipeline"),
    (compiler.DefaultPassBuilder, "define_nopython_pipeline", ["state", "name"],
     "engine/link_only.py LinkOnlyPipeline / EntryPipeline"),
    (compiler_machinery.PassManager, "add_pass_after", ["self", "pass_cls", "location"],
     "engine/link_only.py LinkOnlyPipeline / EntryPipeline"),
    (compiler_machinery.PassManager, "finalize", ["self"], "engine/link_only.py LinkOnlyPipeline / EntryPipeline"),
    (compiler_machinery, "register_pass", ["mutates_CFG", "analysis_only"], "engine/link_only.py passes"),
    (caching._CacheLocator, "from_function", ["py_func", "py_file"],
     "engine/compile_cache.py EngineCacheLocator.from_function (overridden)"),
    (caching._CacheLocator, "ensure_cache_path", ["self"], "engine/compile_cache.py EngineCacheLocator"),
    (caching._CacheLocator, "get_cache_path", ["self"], "engine/compile_cache.py EngineCacheLocator (overridden)"),
    (caching._CacheLocator, "get_source_stamp", ["self"], "engine/compile_cache.py EngineCacheLocator (overridden)"),
    (caching._CacheLocator, "get_disambiguator", ["self"],
     "engine/compile_cache.py EngineCacheLocator (overridden)"),
    (caching.FunctionCache, "__init__", ["self", "py_func"], "engine/compile_cache.py register (EngineCache)"),
    (caching.FunctionCache, "load_overload", ["self", "sig", "target_context"],
     "engine/compile_cache.py EngineCache.load_overload (overridden)"),
    (caching.FunctionCache, "save_overload", ["self", "sig", "data"],
     "engine/compile_cache.py EngineCache.save_overload (overridden)"),
    (caching.FunctionCache, "_index_key", ["self", "sig", "codegen"], "engine/compile_cache.py EngineCache.in_index"),
    (caching.IndexDataCacheFile, "_load_index", ["self"], "engine/compile_cache.py EngineCache.in_index"),
    (caching.IndexDataCacheFile, "__init__", ["self", "cache_path", "filename_base", "source_stamp"],
     "engine/compile_cache.py EngineCache._seed_file"),
    (caching.IndexDataCacheFile, "load", ["self", "key"], "engine/compile_cache.py EngineCache._load_seed"),
    (caching.CompileResultCacheImpl, "rebuild", ["self", "target_context", "payload"],
     "engine/compile_cache.py EngineCache._load_seed"),
    (codegen.CPUCodegen, "magic_tuple", ["self"], "engine/compile_cache.py EngineCache._seed_key"),
    (dispatcher.Dispatcher, "get_call_template", ["self", "args", "kws"],
     "engine/jit.py _one_version_per_type (replaced per dispatcher)"),
    (event.Listener, "on_start", ["self", "event"], "engine/compile_cache.py _Progress.on_start (overridden)"),
    (event.Listener, "on_end", ["self", "event"], "engine/compile_cache.py _Progress.on_end (overridden)"),
    (event, "register", ["kind", "listener"], "engine/compile_cache.py (the compile listener)"),
    (event.Event, "__init__", ["self", "kind", "status", "data", "exc_details"],
     "engine/compile_cache.py _Progress.on_end (reads ev._exc_details)"),
]

# (class attribute that must exist, the gpusim module relying on it)
CLASS_ATTRIBUTES = [
    (caching.CompileResultCacheImpl, "_locator_classes", "engine/compile_cache.py _EngineCacheImpl"),
    (caching.FunctionCache, "_impl_class", "engine/compile_cache.py EngineCache"),
    (caching.CompileResultCacheImpl, "filename_base", "engine/compile_cache.py EngineCache._seed_file"),
    (caching.CompileResultCacheImpl, "locator", "engine/compile_cache.py EngineCache._seed_file"),
    (typed_passes, "NopythonTypeInference", "engine/link_only.py LinkOnlyPipeline (pass inserted after it)"),
    (typed_passes, "NativeLowering", "engine/link_only.py EntryPipeline (pass inserted after it)"),
    (compiler_machinery, "FunctionPass", "engine/link_only.py UseLinkOnlyLibrary"),
    (compiler_machinery, "LoweringPass", "engine/link_only.py SetDeferredEnvironments"),
]

# instance attributes of a fresh JIT code library (read or written by LinkOnlyLibrary.finalize)
LIBRARY_ATTRIBUTES = ["_linking_libraries", "_reload_init", "_final_module", "_finalized", "_codegen"]


def _hook(owner, name: str, user: str) -> str:
    return f"numba {numba.__version__}: {getattr(owner, '__name__', owner)}.{name} (relied on by gpusim/{user})"


@pytest.mark.parametrize("owner, name, parameters, user", METHODS,
                         ids=[f"{getattr(o, '__name__', o)}.{n}" for o, n, _, _ in METHODS])
def test_overridden_or_called_numba_method_has_the_signature_the_hook_expects(owner, name, parameters, user):
    hook = _hook(owner, name, user)
    assert hasattr(owner, name), f"{hook}: gone in this numba"
    found = list(inspect.signature(getattr(owner, name)).parameters)
    assert found == parameters, f"{hook}: signature is now ({', '.join(found)}), the hook expects " \
                                f"({', '.join(parameters)})"


@pytest.mark.parametrize("owner, name, user", CLASS_ATTRIBUTES, ids=[n for _, n, _ in CLASS_ATTRIBUTES])
def test_numba_class_attribute_the_hook_uses_exists(owner, name, user):
    assert hasattr(owner, name), f"{_hook(owner, name, user)}: gone in this numba"


def test_the_code_library_and_cache_internals_linkonly_reads_exist():
    library = registry.cpu_target.target_context.codegen().create_library("gpusim_hook_probe")
    assert isinstance(library, codegen.JITCodeLibrary), \
        f"numba {numba.__version__}: the CPU codegen's library is {type(library)}, link_only subclasses JITCodeLibrary"
    for name in LIBRARY_ATTRIBUTES:
        assert hasattr(library, name), _hook(codegen.JITCodeLibrary, name, "engine/link_only.py finalize") + ": gone"
    assert isinstance(type(library).__dict__.get("codegen") or codegen.CodeLibrary.__dict__.get("codegen"),
                      property), _hook(codegen.CodeLibrary, "codegen", "engine/link_only.py (property overridden)")
    assert hasattr(library._codegen, "_tm") and hasattr(library._codegen._tm, "emit_object"), \
        _hook(codegen.JITCPUCodegen, "_tm.emit_object", "engine/link_only.py serialize_using_object_code")
    assert {"get_cache_path", "get_source_stamp", "get_disambiguator"} <= caching._CacheLocator.__abstractmethods__, \
        _hook(caching._CacheLocator, "__abstractmethods__", "engine/compile_cache.py EngineCacheLocator")


def test_engine_dispatchers_carry_the_attributes_compile_cache_reads():
    from gpusim.engine import bits, compile_cache

    dispatcher_ = bits.popcount64
    for name in ("py_func", "targetoptions", "overloads", "targetctx", "_cache"):
        assert hasattr(dispatcher_, name), _hook(dispatcher.Dispatcher, name, "engine/compile_cache.py")
    cache = dispatcher_._cache
    if isinstance(cache, compile_cache.EngineCache):
        assert hasattr(cache._cache_file, "_index_path"), \
            _hook(caching.IndexDataCacheFile, "_index_path", "engine/compile_cache.py EngineCache.claim_name")


def test_a_compiled_only_callee_links_into_its_caller_through_the_hooks():
    """End to end: a link-only library (no machine code of its own) inlined into an entry point's module,
    with one version per argument type (a literal argument resolves to the plain type)."""
    from gpusim.engine import link_only
    from gpusim.engine.jit import compiled_only, engine_jit

    def twice(x):
        return 2 * x + 1

    callee = compiled_only(twice, cache=False)

    def caller(values):
        total = 0
        for v in values:
            total += callee(v) + callee(3)
        return total

    entry = engine_jit(caller, cache=False)
    values = np.arange(5, dtype=np.int64)
    assert entry(values) == sum(2 * int(v) + 1 + 7 for v in values)
    assert len(callee.overloads) == 1, "a literal argument compiled a second version (jit._one_version_per_type)"
    (result,) = callee.overloads.values()
    assert isinstance(result.library, link_only.LinkOnlyLibrary)
    assert result.library.get_pointer_to_function("anything") == 0


def test_pyproject_pins_the_numba_and_llvmlite_this_is_tested_on():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {dep.split(">=")[0].split("<")[0].strip(): dep for dep in project["dependencies"]}
    installed = {"numba": numba.__version__, "llvmlite": llvmlite.__version__}
    for name, version in installed.items():
        spec = pins.get(name)
        assert spec is not None and "<" in spec and ">=" in spec, f"pyproject.toml must pin {name} to a range"
        low = spec.split(">=")[1].split(",")[0].strip()
        high = spec.split("<")[1].strip()
        as_tuple = [tuple(int(p) for p in v.split(".")[:2]) for v in (version, low, high)]
        assert as_tuple[1] <= as_tuple[0] < as_tuple[2], \
            f"{name} {version} is installed, outside pyproject's {spec}: run this file, then widen the pin"
