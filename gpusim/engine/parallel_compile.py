"""A cold compile on two cores: a helper process compiles part of the engine into the shared cache.

The engine's first compile in a new process is tens of seconds of single-threaded work (numba typing,
lowering and LLVM all hold one lock). When an engine entry point misses the on-disk cache and has a
*split* registered (``compile_cache.register_split``: the independent subtrees worth building apart,
with their argument types derived from the entry's), the process starts one helper process
(``python -c``, the same interpreter and the same ``gpusim`` package) that compiles those subtrees and
saves them to the cache while this process compiles the entry as usual. Whichever process reaches an
engine function first compiles it; the other loads it from the cache when it gets there:

* **Claims.** Before compiling an engine function (a cache miss), a process of the pair creates a
  claim file for that function and argument types in the pair's session directory
  (``O_CREAT | O_EXCL``: exactly one of them succeeds). The other, finding the claim, waits until the
  function is in the cache and loads it; if the claim goes away without a cache entry (the owner's
  compile failed), or the owner process is gone, it claims and compiles the function itself. A
  function is compiled once by the pair, so no two processes write the same cache entry, and the
  engine's call graph has no cycles, so two processes never wait on each other.
* **Saves** take an exclusive ``flock`` on the stamp directory's lock file: numba's index update
  (read, add, write back) is not atomic between processes.
* **Failure degrades, never hangs.** A helper that cannot start, exits early or crashes leaves its
  claims behind a dead process: this process then compiles what it lacks. The helper exits when its
  parent goes away (a watchdog thread) and is terminated when the parent's compile ends, on success,
  error or Ctrl-C (and at interpreter exit).

This module is the mechanism (session, claims, helper process); ``compile_cache`` wires it to the
cache and ``engine/sm/compile_split.py`` says what the helper compiles.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import pickle
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

if sys.platform == "win32":  # Windows: no flock, so no helper process either
    fcntl = None
else:
    import fcntl

POLL_SECONDS = 0.02
"""How often a process waiting on the other's claim looks for the result."""

HELPER_TIMEOUT_SECONDS = 900.0
"""A helper running longer than this (a stuck process) is stopped and its work done here instead."""

SESSIONS_DIR = ".compiling"
"""The stamp directory's folder of session directories (one per parent process while it compiles)."""

ENV_SWITCH = "GPUSIM_PARALLEL_COMPILE"
"""``0`` turns the helper process off (it is also off with fewer than two usable CPUs)."""

_HELPER_CODE = ("import sys\n"
                "if sys.argv[1] not in sys.path:\n"
                "    sys.path.insert(0, sys.argv[1])\n"
                "from gpusim.engine import compile_cache\n"
                "compile_cache.helper_main()\n")
"""What the helper runs (``python -c``): the package directory the parent imported gpusim from is put
on the path when it is not there already, so a checkout and an installed copy both work."""


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def enabled() -> bool:
    """Whether a cold compile may start a helper process here."""
    frozen = getattr(sys, "frozen", False)      # a bundled app: sys.executable is the app, not Python
    return fcntl is not None and not frozen and os.environ.get(ENV_SWITCH, "1") != "0" and usable_cpus() >= 2


@contextlib.contextmanager
def save_lock(directory: Path):
    """Hold an exclusive lock on ``directory``'s lock file (nothing, where flock is unavailable)."""
    handle = None
    if fcntl is not None:
        try:
            handle = open(directory / ".lock", "a+b")
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:
            if handle is not None:
                handle.close()
            handle = None
    try:
        yield
    finally:
        if handle is not None:
            handle.close()           # closing releases the lock


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:              # exists, but not ours to signal
        return True
    return True


def claim_name(cache_file: str, sig) -> str:
    """The claim file name of one engine function (its index file) and argument types."""
    return hashlib.sha1(f"{cache_file}|{sig}".encode()).hexdigest()[:24]


class Session:
    """The claims of one parent process and its helper: a directory of claim files, each holding the
    pid of the process compiling that function."""

    def __init__(self, directory: Path, other_pid: int, helper: subprocess.Popen | None = None):
        self.directory = directory
        self.other_pid = other_pid
        self.helper = helper
        self.held: set[Path] = set()
        self.started = time.monotonic()
        self.waited = 0.0            # seconds spent waiting on the other's claims (for the benchmarks)
        self.returncode: int | None = None    # the helper's exit status, once the session is closed

    # -- the other process -------------------------------------------------------------------------
    def other_running(self) -> bool:
        if self.helper is not None:
            if self.helper.poll() is not None:
                return False
            if time.monotonic() - self.started > HELPER_TIMEOUT_SECONDS:
                stop(self.helper)
                return False
            return True
        return _alive(self.other_pid)

    # -- claims --------------------------------------------------------------------------------------
    def acquire(self, name: str, load):
        """Claim ``name`` or wait for the other process's result: returns what ``load()`` found (the
        other compiled it), or None when this process is to compile it (and now holds the claim)."""
        path = self.directory / name
        while True:
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                pass
            except OSError:          # the session is gone (the other ended it): compile here
                return None
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                self.held.add(path)
                return None
            start = time.monotonic()
            try:
                while path.exists():
                    if not self.other_running():
                        with contextlib.suppress(OSError):
                            path.unlink()
                        break
                    time.sleep(POLL_SECONDS)
                    result = load()
                    if result is not None:
                        return result
            finally:
                self.waited += time.monotonic() - start
            result = load()          # released: saved (load finds it) or failed (claim it next)
            if result is not None:
                return result

    def release(self, name: str) -> None:
        path = self.directory / name
        if path in self.held:
            self.held.discard(path)
            with contextlib.suppress(OSError):
                path.unlink()

    def close(self) -> None:
        """End the session: stop the helper if it still runs, drop the claims and the directory."""
        if self.helper is not None:
            stop(self.helper)
            self.returncode = self.helper.returncode
        for path in list(self.held):
            with contextlib.suppress(OSError):
                path.unlink()
        self.held.clear()
        if self.helper is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


def stop(helper: subprocess.Popen) -> None:
    """Terminate ``helper`` if it runs, and reap it."""
    if helper.poll() is None:
        with contextlib.suppress(OSError):
            helper.terminate()
        try:
            helper.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                helper.kill()
            helper.wait()


_helpers: list[subprocess.Popen] = []


@atexit.register
def _stop_helpers() -> None:
    for helper in _helpers:
        stop(helper)


def _remove_stale_sessions(sessions: Path) -> None:
    try:
        entries = list(sessions.iterdir())
    except OSError:
        return
    for entry in entries:
        pid = entry.name.split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def start_helper(stamp_dir: Path, request: dict, env: dict, package_parent: Path) -> Session | None:
    """Start a helper process on ``request`` (its work, pickled to its stdin); None if it cannot start."""
    sessions = stamp_dir / SESSIONS_DIR
    try:
        sessions.mkdir(parents=True, exist_ok=True)
        _remove_stale_sessions(sessions)
        directory = sessions / f"{os.getpid()}-{os.urandom(4).hex()}"
        directory.mkdir()
        request = {**request, "session": str(directory), "parent": os.getpid()}
        log = open(directory / "helper.log", "wb")
        try:
            helper = subprocess.Popen([sys.executable, "-c", _HELPER_CODE, str(package_parent)],
                                      stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log,
                                      env={**env, ENV_SWITCH: "0"}, close_fds=True)
        finally:
            log.close()
        _helpers.append(helper)
        assert helper.stdin is not None          # stdin=PIPE
        try:
            helper.stdin.write(pickle.dumps(request))
            helper.stdin.close()
        except OSError:              # it died at once: the session is still valid, with nobody else in it
            pass
    except (OSError, pickle.PicklingError, ValueError):
        return None
    return Session(directory, helper.pid, helper)


def read_request() -> dict:
    """In the helper: the parent's request (and, from then on, exit if the parent goes away)."""
    request = pickle.load(sys.stdin.buffer)
    parent = request["parent"]

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="gpusim-parent-watch").start()
    return request
