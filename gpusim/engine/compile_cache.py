"""Where the compiled engine is kept on disk, and what a user sees while it is built.

numba's own ``cache=True`` writes ``__pycache__/*.nbi``/``*.nbc`` next to the sources and stamps each
function by its own file only. For gpusim that is wrong three ways: an install writes into
site-packages (and leftover cache directories there outlive ``pip uninstall`` and turn ``gpusim`` into
a namespace package that shadows an editable install); a checkout and an installed copy of the same
source compile separately (two source paths, two caches); and a change to a callee in another file
leaves its callers' stale machine code in the cache (numba inlines callees into callers).

Here every engine function is cached in one per-user directory (``$GPUSIM_CACHE_DIR``, else
``$NUMBA_CACHE_DIR/gpusim`` when numba's cache directory is set explicitly, else
``$XDG_CACHE_HOME/gpusim`` or ``~/.cache/gpusim``), under a *source stamp*: a hash of the source of
every module numba compiles engine code from (the files that use ``gpusim.engine.jit``'s decorators
and every gpusim module they import, whose constants are frozen into the machine code), with the
numba, llvmlite and Python versions. Inside it a function's files sit at its module's path relative
to the ``gpusim`` package, so two copies of the same source find the same files, and any edit to any
of those files starts a fresh stamp directory (the previous few stamps are kept, older ones removed).
If the directory cannot be written, the engine still runs, uncached, after one warning.

On a machine with two or more CPUs a cold compile of an entry point with a registered *split*
(``register_split``) starts a helper process that compiles the split's subtrees into the same cache
while this process compiles the entry; each engine function is compiled by one of the two and loaded
by the other (``engine/parallel_compile.py``).

A platform wheel also carries a *seed*, the engine compiled ahead of time, which a miss in the user's
cache is loaded from where it fits (``engine/compile_seed.py``). The cache root and the source stamp are
computed in ``engine/source_stamp.py``.

The first launch after an install or an edit compiles the engine (tens of seconds). A numba compile
listener notices the first engine function that misses the cache and prints one notice to stderr,
with progress (functions compiled or loaded out of those the entry point reaches), and the time it
took. Nothing is printed when the cache is warm: the listener only runs when numba compiles.
"""

from __future__ import annotations

import importlib
import json
import os
import pickle
import shutil
import sys
import types as pytypes
import warnings
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from numba.core import event
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile, _CacheLocator
from numba.core.dispatcher import Dispatcher

from gpusim.engine import parallel_compile
from gpusim.engine.compile_notice import CompileNotice
from gpusim.engine.compile_seed import seed_dir, seed_status
from gpusim.engine.source_stamp import PACKAGE_ROOT, cache_root, source_stamp, stamp_dir

KEEP_STAMPS = 3
"""Stamp directories kept in the cache root: the current one and the most recently used others."""

NOTICE_MIN_FUNCTIONS = 8
"""A compile that reaches fewer uncached engine functions than this is quick and not announced."""

SECONDS_PER_FUNCTION = 0.17
"""Rough cold-compile cost per engine function on a 2-core machine, for the notice's estimate."""

PARALLEL_SPEEDUP = 0.6
"""Rough share of the one-process compile time a cold compile with the helper process takes."""

_ENGINE: dict[int, Dispatcher] = {}          # id -> every dispatcher the engine decorators made
SplitPlan = Callable[..., Iterable[tuple[Dispatcher, tuple]]]   # arg types -> [(dispatcher, arg types), ...]
_SPLITS: dict[tuple[str, str], SplitPlan] = {}  # entry (module, qualname) -> its split (register_split)
# disabled: cache dir unusable (compile in memory); warned: said so; session: the helper's (parallel_compile.Session
# or None) of the compile in progress; last_session: the one before (tests look at it)
_state: dict[str, Any] = {"disabled": False, "warned": False, "session": None, "last_session": None}


@lru_cache(maxsize=1)
def seed_magic() -> tuple[str, str, str] | None:
    """The codegen tuple (triple, CPU, features) the seed's index is keyed by, if there is a usable seed:
    built from this source, by this numba, for this process's triple and a CPU whose required features
    this machine has; else None (``seed_status`` says why)."""
    return seed_status()[0]


def compiled_functions() -> int:
    """Engine functions (index files) compiled into the user's cache for the current source stamp."""
    try:
        return sum(1 for _ in stamp_dir().rglob("*.nbi"))
    except OSError:
        return 0


class EngineCacheLocator(_CacheLocator):
    """numba cache locator for gpusim's own modules: the shared stamp directory, keyed by the module's
    path relative to the package, whatever directory the package was imported from."""

    def __init__(self, py_func, py_file):
        self._lineno = py_func.__code__.co_firstlineno
        self.package_dir = Path(py_file).resolve().relative_to(PACKAGE_ROOT).parent.parts   # in the package
        self._cache_path = str(stamp_dir().joinpath(*self.package_dir))

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return source_stamp()

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            Path(py_file).resolve().relative_to(PACKAGE_ROOT)
        except ValueError:
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError as error:
            _warn_uncached(error)
            return None
        return self


class _EngineCacheImpl(CompileResultCacheImpl):
    _locator_classes = [EngineCacheLocator]


class EngineCache(FunctionCache):
    """numba's function cache with the engine locator; an I/O error disables caching (one warning).

    Saves hold the stamp directory's lock (two processes may save overloads of one function at once).
    While a parallel compile runs (``engine/parallel_compile.py``) a miss claims the function, or waits
    for the other process's result and loads that."""

    dispatcher: Any = None     # the numba Dispatcher this cache serves, set by ``register``
    _impl_class = _EngineCacheImpl

    def _load(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except OSError as error:
            _warn_uncached(error)
            return None

    def _seed_file(self) -> IndexDataCacheFile:
        """The seed's index file of this function: at the module's place in the package, as in the user's
        cache (from the locator, so a cache root changed since does not matter)."""
        return IndexDataCacheFile(cache_path=str(seed_dir().joinpath(*self._impl.locator.package_dir)),
                                  filename_base=self._impl.filename_base, source_stamp=source_stamp())

    def _seed_key(self, sig, codegen):
        magic = seed_magic()
        if magic is None or magic[0] != codegen.magic_tuple()[0]:
            return None
        key = self._index_key(sig, codegen)
        return key[0], magic, key[2]

    def _load_seed(self, sig, target_context):
        """``sig`` from the wheel's seed (see the module docstring), or None."""
        key = self._seed_key(sig, target_context.codegen())
        if key is None:
            return None
        try:
            data = self._seed_file().load(key)
        except (OSError, EOFError, pickle.UnpicklingError):
            return None
        return None if data is None else self._impl.rebuild(target_context, data)

    def claim_name(self, sig) -> str:
        return parallel_compile.claim_name(self._cache_file._index_path, sig)

    def load_overload(self, sig, target_context):
        if _state["disabled"]:
            return None
        result = self._load(sig, target_context)
        if result is None:
            result = self._load_seed(sig, target_context)
        session = _state["session"]
        if result is None and session is not None and not _state["disabled"]:
            result = session.acquire(self.claim_name(sig), lambda: self._load(sig, target_context))
        if result is not None:
            _progress.loaded(getattr(self, "dispatcher", None))
        return result

    def save_overload(self, sig, data):
        if not _state["disabled"]:
            try:
                with parallel_compile.save_lock(stamp_dir()):
                    super().save_overload(sig, data)
            except OSError as error:
                _warn_uncached(error)
        session = _state["session"]
        if session is not None:
            session.release(self.claim_name(sig))

    def in_index(self, sig, codegen) -> bool:
        """Whether the cache holds ``sig`` (an index look-up, nothing loaded)."""
        try:
            if self._index_key(sig, codegen) in self._cache_file._load_index():
                return True
            seed_key = self._seed_key(sig, codegen)
            return seed_key is not None and seed_key in self._seed_file()._load_index()
        except (OSError, EOFError, pickle.UnpicklingError):
            return False


def _warn_uncached(error: Exception) -> None:
    _state["disabled"] = True
    if not _state["warned"]:
        _state["warned"] = True
        warnings.warn(f"gpusim: cannot use the engine cache directory {cache_root()} ({error}); the engine "
                      f"is compiled in every new process (set GPUSIM_CACHE_DIR to a writable directory)",
                      RuntimeWarning, stacklevel=3)


def register(dispatcher: Dispatcher, cache: bool) -> Dispatcher:
    """Record an engine dispatcher (for the progress count) and give it the engine cache."""
    _ENGINE[id(dispatcher)] = dispatcher
    if cache and not _state["disabled"]:
        try:
            engine_cache = EngineCache(dispatcher.py_func)
            engine_cache.dispatcher = dispatcher
            dispatcher._cache = engine_cache  # type: ignore[attr-defined]  # numba's private hook (pinned, tested)
        except RuntimeError:      # no locator: the directory is unusable (already warned)
            pass
    return dispatcher


# ---------------------------------------------------------------------------------------------------
# reachability: how many engine functions a compile of an entry point will compile or load


def _code_names(code: pytypes.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _code_names(const)
    return names


def callees(dispatcher: Dispatcher) -> list[Dispatcher]:
    """The engine dispatchers ``dispatcher``'s own code names (its direct callees)."""
    py_func = dispatcher.py_func
    names = _code_names(py_func.__code__)
    scope = py_func.__globals__
    found = []
    for name in names:
        value = scope.get(name)
        if isinstance(value, pytypes.ModuleType):
            found += [getattr(value, attr) for attr in names if id(getattr(value, attr, None)) in _ENGINE]
        elif id(value) in _ENGINE:
            found.append(value)
    return found


def reachable(dispatcher: Dispatcher) -> list[Dispatcher]:
    """The engine dispatchers ``dispatcher``'s code calls, directly or not, itself included."""
    seen = {id(dispatcher): dispatcher}
    todo = [dispatcher]
    while todo:
        for callee in callees(todo.pop()):
            if id(callee) not in seen:
                seen[id(callee)] = callee
                todo.append(callee)
    return list(seen.values())


def still_to_build(dispatcher: Dispatcher) -> list[Dispatcher]:
    """The engine dispatchers a compile of ``dispatcher`` will compile or load: those it reaches
    without passing through one already compiled here (whose code holds its callees' code)."""
    seen = {id(dispatcher): dispatcher}
    todo = [dispatcher]
    while todo:
        for callee in callees(todo.pop()):
            if id(callee) not in seen and not callee.overloads:
                seen[id(callee)] = callee
                todo.append(callee)
    return list(seen.values())


def _compiled_separately(dispatcher: Dispatcher) -> bool:
    """numba compiles (or loads) it as a function of its own; ``inline="always"`` ones are inlined as IR."""
    return dispatcher.targetoptions.get("inline", "never") != "always"


# ---------------------------------------------------------------------------------------------------
# the notice


RATE_FILE = "compile_rate.json"
"""In the cache root: the seconds per engine function the last large cold compile took on this machine
(``{"seconds_per_function": s}``, the helper's speedup factored out), for the next notice's estimate."""

RATE_MIN_FUNCTIONS = 50
"""A compile of fewer functions than this does not update the measured rate (too small to be typical)."""


def measured_seconds_per_function() -> float:
    """This machine's measured cold-compile cost per engine function, else ``SECONDS_PER_FUNCTION``."""
    try:
        rate = float(json.loads((cache_root() / RATE_FILE).read_text(encoding="utf-8"))["seconds_per_function"])
    except (OSError, ValueError, KeyError, TypeError):
        return SECONDS_PER_FUNCTION
    return rate if 0.0 < rate < 60.0 else SECONDS_PER_FUNCTION


class Notice(CompileNotice):
    """The compile notice, naming this cache's directory and estimating from the rate the last cold
    compile here measured (``RATE_FILE``), else ``SECONDS_PER_FUNCTION``; it records the rate it measures."""

    def __init__(self, total: int, stream=None, *, use_rich: bool | None = None, speedup: float = 1.0):
        self.speedup = speedup
        super().__init__(total, stream, cache_dir=cache_root(), seconds_per_function=measured_seconds_per_function(),
                         use_rich=use_rich, speedup=speedup)

    def finish(self) -> float:
        seconds = super().finish()
        if self.total >= RATE_MIN_FUNCTIONS and not _state["disabled"]:
            try:
                rate = {"seconds_per_function": round(seconds / (self.total * self.speedup), 4)}
                (cache_root() / RATE_FILE).write_text(json.dumps(rate) + "\n", encoding="utf-8")
            except OSError:
                pass
        return seconds


class _Progress(event.Listener):
    """numba compile listener: opens a notice when an engine entry point starts compiling, counts the
    engine functions compiled (and loaded from the cache) under it, and closes the notice after."""

    def __init__(self):
        self.depth = 0
        self.notice: Notice | None = None
        self.pending: set[int] = set()

    def on_start(self, ev):
        dispatcher = ev.data["dispatcher"]
        if self.depth == 0 and id(dispatcher) in _ENGINE:
            pending = [d for d in still_to_build(dispatcher) if _compiled_separately(d)]
            if len(pending) >= NOTICE_MIN_FUNCTIONS:
                parallel = _start_split(dispatcher, ev.data["args"])
                if os.environ.get("GPUSIM_COMPILE_NOTICE", "1") != "0":
                    self.pending = {id(d) for d in pending}
                    self.notice = Notice(len(pending), speedup=PARALLEL_SPEEDUP if parallel else 1.0)
        self.depth += 1

    def on_end(self, ev):
        self.depth -= 1
        session = _state["session"]
        if session is not None and getattr(ev, "_exc_details", None) is not None:
            cache = getattr(ev.data["dispatcher"], "_cache", None)
            if isinstance(cache, EngineCache):      # the compile failed: let the other process have it
                session.release(cache.claim_name(tuple(ev.data["args"])))
        if self.depth == 0 and session is not None and session.helper is not None:
            _state["session"] = None
            session.close()
            _state["last_session"] = session
        if self.notice is None:
            return
        if self.depth == 0:
            self.notice.finish()
            self.notice = None
            _prune_stamps()
        else:
            self._count([ev.data["dispatcher"]])

    def _count(self, dispatchers) -> None:
        done = [d for d in dispatchers if id(d) in self.pending]
        if done and self.notice is not None:
            self.pending.difference_update(id(d) for d in done)
            self.notice.advance(len(done))

    def loaded(self, dispatcher):
        """A function came from the cache: it and the functions its code calls are done."""
        if self.notice is not None and dispatcher is not None:
            self._count(reachable(dispatcher))


_progress = _Progress()
event.register("numba:compile", _progress)


def _prune_stamps() -> None:
    """Remove stamp directories beyond the ``KEEP_STAMPS`` most recently used (after a full compile)."""
    root = cache_root()
    try:
        current = stamp_dir()
        os.utime(current)
        stamps = [p for p in root.iterdir() if p.is_dir() and len(p.name) == len(current.name)
                  and all(ch in "0123456789abcdef" for ch in p.name)]
        stamps.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in stamps[KEEP_STAMPS:]:
            if old != current:
                shutil.rmtree(old, ignore_errors=True)
    except OSError:
        pass


# ---------------------------------------------------------------------------------------------------
# the parallel cold compile (engine/parallel_compile.py): what the helper process compiles


def _key(dispatcher: Dispatcher) -> tuple[str, str]:
    function: Any = getattr(dispatcher, "py_func", dispatcher)      # a plain function under NUMBA_DISABLE_JIT
    return function.__module__, function.__qualname__


def register_split(entry: Dispatcher, helper_roots: SplitPlan) -> None:
    """Let a cold compile of ``entry`` hand subtrees to a helper process: ``helper_roots(*arg_types)``
    maps the entry's argument types to ``[(dispatcher, arg_types), ...]``, compiled in that order by the
    helper (start with what the entry's compile reaches first). The module defining ``helper_roots`` is
    imported by the helper, and must register the split on import."""
    _SPLITS[_key(entry)] = helper_roots


def split_roots(entry: Dispatcher, args) -> list[tuple[Dispatcher, tuple]]:
    """The helper's work for a compile of ``entry`` with argument types ``args``, less what is already
    compiled here or in the cache."""
    split = _SPLITS.get(_key(entry))
    if split is None:
        return []
    roots = []
    for dispatcher, sig in split(*args):
        sig = tuple(sig)
        cache = getattr(dispatcher, "_cache", None)     # numba's private cache hook (see register)
        codegen = dispatcher.targetctx.codegen()  # type: ignore[attr-defined]  # numba's stubs: BaseContext
        if sig in dispatcher.overloads or (isinstance(cache, EngineCache) and cache.in_index(sig, codegen)):
            continue
        roots.append((dispatcher, sig))
    return roots


def _start_split(entry: Dispatcher, args) -> bool:
    """At a cold compile of ``entry``: start the helper process if a split is registered and there is
    work for it. Never raises (without a helper the compile simply runs here)."""
    if _state["session"] is not None or _state["disabled"] or not parallel_compile.enabled():
        return False
    try:
        if not split_roots(entry, args):
            return False
        request = {"package": str(PACKAGE_ROOT), "stamp": source_stamp(), "entry": _key(entry),
                   "plan": _SPLITS[_key(entry)].__module__, "args": tuple(args)}
        env = {**os.environ, "GPUSIM_CACHE_DIR": str(cache_root()), "GPUSIM_COMPILE_NOTICE": "0"}
        session = parallel_compile.start_helper(stamp_dir(), request, env, PACKAGE_ROOT.parent)
    except Exception:                    # noqa: BLE001 - a helper is an optimization, never an error
        return False
    _state["session"] = session
    return session is not None


def helper_main() -> None:
    """The helper process (started by ``parallel_compile.start_helper``): compile the split's roots."""
    request = parallel_compile.read_request()
    if request["package"] != str(PACKAGE_ROOT) or request["stamp"] != source_stamp():
        sys.exit(3)                      # another copy of gpusim: its cache entries would not be found
    importlib.import_module(request["plan"])
    module, qualname = request["entry"]
    entry = getattr(importlib.import_module(module), qualname)
    _state["session"] = parallel_compile.Session(Path(request["session"]), request["parent"])
    for dispatcher, sig in split_roots(entry, request["args"]):
        dispatcher.compile(sig)
