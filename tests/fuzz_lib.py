"""gpusim's own fuzzer: seeded cases, run in forked children under a watchdog.

Three kinds of case, each fully determined by ``(seed, index)``:

* ``frontend`` -- a PTX file of the shipped corpus, mutated 1-3 times (token deletion, duplication and
  swap, type and register changes, truncation, random bytes, literal extremes, declaration extremes, line
  deletion/duplication/swap, inserted hostile instructions), then parsed and lowered (``gpu.load_ptx``);
* ``launch`` -- a small corpus kernel, mutated 0-2 times in its body, loaded and launched on the
  ``teaching`` config (``sms=1``) with random grids, blocks, arguments and engine (timed or functional);
* ``api`` -- hostile values for ``GPU(...)`` config overrides, launch arguments and device-memory calls.

A case passes when it returns or raises one of the project's own errors (a ``gpusim.errors.GpusimError``
other than ``InternalError``) and leaves nothing behind: a failed load allocates nothing. Anything else is
counted: ``raw`` (another exception type escaped), ``internal`` (the engine's safety net fired: a bug),
``noline`` (a front-end case's PTXSyntaxError names no line: every PTX error must say where it is),
``leak`` (a failed load left allocations), ``crash`` (the child died: a signal) and ``hang`` (no answer
within the watchdog's time).

Children are forked once per batch and run many cases each; before a case a child writes its index to a
pipe, after it the outcome, so when a child dies or stops answering the parent knows which case did it,
records it and forks a new child for the rest of the batch.
"""

from __future__ import annotations

import os
import random
import select
import signal
import traceback
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FAILURES = ("raw", "internal", "noline", "leak", "crash", "hang")


def corpus_files(max_bytes: int = 24_000) -> list[Path]:
    """The shipped PTX files (programs/ and tests/data/), smallest first; the few large ones (the 66 KB LLM
    decode and the 1 MB GEMV lab) are left out for speed: their instructions are the same forms."""
    files = [p for p in sorted(ROOT.glob("programs/**/*.ptx")) + sorted(ROOT.glob("tests/data/**/*.ptx"))
             if p.stat().st_size <= max_bytes]
    return sorted(files, key=lambda p: (p.stat().st_size, str(p)))


_CORPUS_CACHE: dict[str, str] = {}


def corpus_texts() -> list[tuple[str, str]]:
    if not _CORPUS_CACHE:
        for path in corpus_files():
            _CORPUS_CACHE[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return list(_CORPUS_CACHE.items())


# kernels small enough to launch many times: file -> kernel names
LAUNCHABLE = ("programs/saxpy.ptx", "programs/daxpy.ptx", "programs/reduce_shared.ptx",
              "programs/reduce_shfl.ptx", "programs/histogram.ptx", "programs/divergence.ptx",
              "programs/hash64.ptx", "tests/data/ptx/atomics.ptx", "tests/data/ptx/warp_ops.ptx",
              "tests/data/ptx/smem_const_local.ptx", "programs/matmul_naive.ptx")

# ---------------------------------------------------------------- mutations
import re  # noqa: E402

_TOKEN = re.compile(r"%?[A-Za-z_$][\w$.]*|0[fFdD][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\S")
_NUMBER = re.compile(r"(?<![\w%$.])(?:0[fFdD][0-9a-fA-F]{8,16}|0[xX][0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")
_TYPES = [".u8", ".s8", ".b8", ".u16", ".s16", ".b16", ".f16", ".u32", ".s32", ".b32", ".f32", ".u64", ".s64",
          ".b64", ".f64", ".pred", ".f16x2", ".bf16", ".v2", ".v4", ".v8", ".global", ".shared", ".local",
          ".param", ".const", ".wide", ".lo", ".hi", ".rn", ".rz", ".approx", ".sat", ".ftz", ".x", ".y"]
_EXTREMES = ["0", "-0", "1", "-1", "2147483647", "2147483648", "-2147483649", "4294967295", "4294967296",
             "9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
             "9223372036854775800", "-9223372036854775808", "0x7FFFFFFFFFFFFFFF", "0xFFFFFFFFFFFFFFFFF",
             "1" * 4301, "9" * 40, "0f7F800000", "0fFF800000", "0f7FC00000", "0fFFFFFFFF", "0f00000001",
             "0d7FF0000000000000", "0dFFFFFFFFFFFFFFFF", "1e309", "1e-400", "3.4028236e38", "-1e39",
             "1.5", "0.0", "0x0", "0b1", "0777", "08"]
_DECL_SIZES = ["0", "1", "3", "4097", "65536", "1048576", "274877906944", "9223372036854775807",
               "18446744073709551616", "-1", "1" * 50]
_HOSTILE = ["ld.param.u64 %rd1, [{p}+9223372036854775800];", "ld.param.u64 %rd1, [{p}-8];",
            "ld.param.u32 %r1, [{p}+2147483647];", "bra $FUZZ_END;", "@%p1 bra $FUZZ_END;",
            "bar.sync 0;", "bar.sync 1, 33;", "bar.sync 16;", "trap;", "exit;", "ret;",
            "ld.global.u32 %r1, [0];", "st.global.u32 [%rd1+1], %r1;", "ld.shared.u32 %r1, [4294967295];",
            "ld.local.u64 %rd1, [-8];", "st.shared.v4.f32 [%rd1+4294967296], {%f1, %f1, %f1, %f1};",
            "atom.global.add.u32 %r1, [%rd1+3], 1;", "mov.u32 %r1, 0f7F800000;",
            "add.f32 %f1, %f1, 1e400;", "shfl.sync.idx.b32 %r1, %r1, 99, 31, -1;",
            "cvta.to.shared.u64 %rd1, %rd1;", "ld.u32 %r1, [%rd1+18446744073709551615];"]


def _tokens(text: str) -> list[re.Match]:
    return list(_TOKEN.finditer(text))


def _replace_span(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def mutate(text: str, rng: random.Random, body_only: bool = False) -> str:
    """One random mutation of PTX ``text`` (``body_only``: mild ones inside instruction lines)."""
    lines = text.split("\n")
    body = [i for i, line in enumerate(lines) if line.strip().endswith(";") and not line.strip().startswith(".")]
    ops = ["line_delete", "line_dup", "line_swap", "literal", "register", "hostile", "type"] if body_only else [
        "tok_delete", "tok_dup", "tok_swap", "type", "register", "truncate", "bytes", "literal", "decl",
        "line_delete", "line_dup", "line_swap", "hostile"]
    op = rng.choice(ops)
    if op in ("line_delete", "line_dup", "line_swap", "hostile", "register", "literal", "type") and body:
        i = rng.choice(body)
        if op == "line_delete":
            del lines[i]
        elif op == "line_dup":
            lines.insert(i, lines[i])
        elif op == "line_swap":
            j = rng.choice(body)
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "hostile":
            params = re.findall(r"\.param\s+\.\w+\s+([\w$]+)", text)
            ins = rng.choice(_HOSTILE).replace("{p}", params[0] if params else "p")
            lines.insert(i, "\t" + ins)
            if "$FUZZ_END" in ins:
                close = max((k for k, line in enumerate(lines) if line.strip() == "}"), default=len(lines))
                lines.insert(close, "$FUZZ_END:")
        elif op == "register":
            regs = list(re.finditer(r"%(rd|r|f|fd|p|rs|h)(\d+)", lines[i]))
            if regs:
                m = rng.choice(regs)
                new = rng.choice(["%r", "%rd", "%f", "%fd", "%p", "%rs"]) + str(rng.choice(
                    [0, 1, 2, int(m.group(2)) + 1, 99, 100000]))
                lines[i] = _replace_span(lines[i], m.start(), m.end(), new)
        elif op == "literal":
            nums = list(_NUMBER.finditer(lines[i]))
            if nums:
                m = rng.choice(nums)
                lines[i] = _replace_span(lines[i], m.start(), m.end(), rng.choice(_EXTREMES))
        elif op == "type":
            types = list(re.finditer(r"\.(?:[usbf](?:8|16|32|64)|pred|v[248]|global|shared|local|param|"
                                     r"const|wide|lo|hi|rn|rz|approx|sat|ftz)\b", lines[i]))
            if types:
                m = rng.choice(types)
                lines[i] = _replace_span(lines[i], m.start(), m.end(), rng.choice(_TYPES))
        return "\n".join(lines)
    if op == "type":
        found = list(re.finditer(r"\.(?:[usbf](?:8|16|32|64)|pred|v[248])\b", text))
        if found:
            m = rng.choice(found)
            return _replace_span(text, m.start(), m.end(), rng.choice(_TYPES))
        return text
    if op == "truncate":
        return text[:rng.randrange(len(text) + 1)]
    if op == "bytes":
        pos = rng.randrange(len(text) + 1)
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))).decode("latin-1")
        return text[:pos] + junk + text[pos:]
    if op == "decl":
        found = list(re.finditer(r"\[(\d+)\]|<(\d+)>|\.align\s+(\d+)", text))
        if found:
            m = rng.choice(found)
            group = next(g for g in (1, 2, 3) if m.group(g) is not None)
            return _replace_span(text, m.start(group), m.end(group), rng.choice(_DECL_SIZES))
        decl = rng.choice([".global .u32 fz_g[{n}];", ".shared .align 4 .b8 fz_s[{n}];",
                           ".const .f32 fz_c[{n}] = {{1.0, 2.0}};"])
        return decl.format(n=rng.choice(_DECL_SIZES)) + "\n" + text
    if op == "literal":
        nums = list(_NUMBER.finditer(text))
        if nums:
            m = rng.choice(nums)
            return _replace_span(text, m.start(), m.end(), rng.choice(_EXTREMES))
        return text
    toks = _tokens(text)
    if not toks:
        return text
    t = rng.choice(toks)
    if op == "tok_delete":
        return _replace_span(text, t.start(), t.end(), "")
    if op == "tok_dup":
        return _replace_span(text, t.start(), t.end(), t.group() + " " + t.group())
    u = rng.choice(toks)
    if t.start() > u.start():
        t, u = u, t
    if t.end() > u.start():
        return text
    return text[:t.start()] + u.group() + text[t.end():u.start()] + t.group() + text[u.end():]


# ---------------------------------------------------------------- hostile API values
_NASTY = [None, float("nan"), float("inf"), -float("inf"), -1, 0, 1, 2, 3, 31, 32, 33, 1.5, 2**31, 2**32, 2**63,
          2**64, -(2**63), 10**30, 1e300, "x", "", "32", b"\x00", [], [1], (1, 2, 3, 4), (0,), (1, 1, 1),
          (2**31, 1), True, False, np.int64(64), np.float32(2.0), np.int64(-5), {"a": 1}, object(), 1j]


def nasty(rng: random.Random):
    return rng.choice(_NASTY)


# ---------------------------------------------------------------- cases
def make_case(seed: int, index: int, mix=(0.8, 0.1, 0.1)) -> dict:
    """The case ``index`` of campaign ``seed``: a dict naming its kind and everything it needs."""
    rng = random.Random(seed * 1_000_003 + index)
    x = rng.random()
    if x < mix[0]:
        name, text = rng.choice(corpus_texts())
        for _ in range(rng.randint(1, 3)):
            text = mutate(text, rng)
        return {"kind": "frontend", "index": index, "source": name, "text": text}
    if x < mix[0] + mix[1]:
        texts = dict(corpus_texts())
        name = rng.choice([f for f in LAUNCHABLE if f in texts])
        text = texts[name]
        for _ in range(rng.choice([0, 1, 1, 2])):
            text = mutate(text, rng, body_only=True)
        return {"kind": "launch", "index": index, "source": name, "text": text, "seed": rng.getrandbits(32)}
    return {"kind": "api", "index": index, "seed": rng.getrandbits(32)}


class Context:
    """Per-child state: one small GPU, re-made when its heap has grown."""

    def __init__(self):
        from gpusim.api.gpu import GPU

        self.GPU = GPU
        self.gpu = GPU("teaching", sms=1, max_cycles=300_000)

    def fresh(self):
        if self.gpu.heap.top > (64 << 20):
            self.gpu = self.GPU("teaching", sms=1, max_cycles=300_000)
        return self.gpu


def _load_atomic(gpu, text: str, name: str):
    """Load ``text``; a failed load must leave the heap's allocations exactly as they were."""
    from gpusim.errors import GpusimError

    before = (gpu.heap.top, dict(gpu.heap.sizes))
    try:
        return gpu.load_ptx(text, name)
    except GpusimError:
        if (gpu.heap.top, dict(gpu.heap.sizes)) != before:
            raise LeakError(f"a failed load left allocations behind ({len(gpu.heap.sizes)} live, "
                            f"{len(before[1])} before)") from None
        raise


class LeakError(Exception):
    """A failed load allocated device memory."""


def _arguments(gpu, kernel, rng: random.Random) -> list:
    args = []
    for slot in kernel.program.params:
        if slot.type in ("u64", "s64", "b64") and rng.random() < 0.85:
            n = rng.choice([1, 7, 32, 64, 256, 1024, 4096])
            args.append(gpu.zeros(n, dtype=rng.choice([np.float32, np.uint32, np.float64, np.int64])))
        elif slot.type in ("f32", "f64", "f16"):
            args.append(rng.choice([0.0, 1.0, -2.5, float("nan"), float("inf"), 3e38]))
        else:
            args.append(rng.choice([0, 1, 7, 32, 100, 1000, 2**31 - 1]))
    return args


def _run_launch(ctx: Context, case: dict) -> None:
    gpu = ctx.fresh()
    rng = random.Random(case["seed"])
    module = _load_atomic(gpu, case["text"], case["source"])
    for kernel in list(module)[:2]:
        args = _arguments(gpu, kernel, rng)
        grid = rng.choice([1, 2, 3, (2, 2), (1, 1, 2)])
        block = rng.choice([1, 31, 32, 33, 64, 128, (8, 8), (16, 4, 2), 256])
        timing = rng.random() < 0.5
        extra = {} if timing else {"max_warp_instructions": 20_000}
        shared = rng.choice([0, 0, 0, 4, 256, 1024])
        try:
            gpu.launch(kernel, grid, block, args, shared, timing=timing, **extra)
        finally:
            for a in args:
                if hasattr(a, "free") and not getattr(a, "_freed", False):
                    a.free()


def _run_api(ctx: Context, case: dict) -> None:
    rng = random.Random(case["seed"])
    choice = rng.randrange(4)
    if choice == 0:   # config overrides
        from gpusim.arch.config import FIELDS

        fields = [f for f, spec in FIELDS.items() if not spec.metadata["loader_set"]]
        overrides = {rng.choice(fields): nasty(rng) for _ in range(rng.randint(1, 3))}
        ctx.GPU("teaching", **overrides)
        return
    gpu = ctx.fresh()
    if choice == 1:   # device memory
        what = rng.randrange(4)
        if what == 0:
            gpu.empty(nasty(rng), dtype=rng.choice([np.float32, np.uint8, "f8", "U3", object, None, nasty(rng)]))
        elif what == 1:
            gpu.to_device(rng.choice([np.zeros(0), np.arange(5), np.zeros((2, 3), np.float16), [1, 2],
                                      "abc", np.array(["a"]), np.zeros(3, dtype=object), nasty(rng)]))
        elif what == 2:
            a = gpu.zeros(4)
            a.free()
            a.free()
        else:
            a = gpu.zeros(4)
            a.set(rng.choice([np.zeros(4, np.float32), np.zeros(5, np.float32), np.zeros(4), nasty(rng)]))
        return
    texts = dict(corpus_texts())
    module = gpu.load_ptx(texts["programs/saxpy.ptx"], "saxpy.ptx") if not hasattr(ctx, "saxpy") else ctx.saxpy
    ctx.saxpy = module
    kernel = module["saxpy"]
    n = 64
    x, y = gpu.zeros(n), gpu.zeros(n)
    good = {"grid": 2, "block": 32, "args": [n, 2.0, x, y], "shared_bytes": 0, "timing": rng.random() < 0.5,
            "regs": None, "trace": False, "max_warp_instructions": None}
    for _ in range(rng.randint(1, 2)):
        key = rng.choice(list(good))
        if key == "args":
            args = list(good["args"])
            if args and rng.random() < 0.8:
                args[rng.randrange(len(args))] = nasty(rng)
            else:
                args = args[:rng.randrange(len(args) + 2)]
            good["args"] = args
        else:
            good[key] = nasty(rng)
    try:
        if choice == 2:
            gpu.launch(kernel, good["grid"], good["block"], good["args"], good["shared_bytes"],
                       timing=good["timing"], regs=good["regs"], trace=good["trace"],
                       max_warp_instructions=good["max_warp_instructions"])
        else:
            kernel[good["grid"], good["block"], good["shared_bytes"]](*good["args"], timing=good["timing"])
    finally:
        x.free()
        y.free()


def run_case(ctx: Context, case: dict) -> tuple[str, str]:
    """(outcome, detail): ``ok``/``error`` pass; ``raw``/``internal``/``leak`` are failures."""
    from gpusim.errors import GpusimError, PTXSyntaxError

    internal = _internal_type()
    try:
        if case["kind"] == "frontend":
            _load_atomic(ctx.fresh(), case["text"], case["source"])
        elif case["kind"] == "launch":
            _run_launch(ctx, case)
        else:
            _run_api(ctx, case)
    except LeakError as exc:
        return "leak", str(exc)
    except GpusimError as exc:
        if internal is not None and isinstance(exc, internal):
            return "internal", str(exc)[:2000]
        if case["kind"] == "frontend" and isinstance(exc, PTXSyntaxError) and exc.line < 1:
            return "noline", str(exc)[:500]
        return "error", type(exc).__name__
    except Exception as exc:   # noqa: BLE001 - the point: anything else is a finding
        return "raw", f"{type(exc).__name__}: {exc}"[:500] + "\n" + traceback.format_exc(limit=-4)[-1500:]
    return "ok", ""


def _internal_type():
    import gpusim.errors as errors

    return getattr(errors, "InternalError", None)


# ---------------------------------------------------------------- forked batches
def _child(write_fd: int, cases: list[dict]) -> None:
    import warnings

    warnings.simplefilter("ignore")     # gpusim's own warnings (a cut trace ...) are not findings
    ctx = Context()
    out = os.fdopen(write_fd, "w", buffering=1)
    for i, case in enumerate(cases):
        out.write(f"S {i}\n")
        outcome, detail = run_case(ctx, case)
        out.write(f"D {i} {outcome} {detail.encode('unicode_escape').decode('ascii')}\n")
    out.flush()
    os._exit(0)


_WARM = []


def warm() -> None:
    """Load the compiled engine in this process (one functional and one timed launch) before forking, so
    that children share it instead of each loading it from numba's cache."""
    if _WARM:
        return
    import warnings

    from gpusim.api.gpu import GPU

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gpu = GPU("teaching", sms=1)
        kernel = gpu.load_ptx(dict(corpus_texts())["programs/saxpy.ptx"])["saxpy"]
        for timing in (False, True):
            gpu.launch(kernel, 1, 32, [32, 2.0, gpu.zeros(32), gpu.zeros(32)], timing=timing)
    _WARM.append(True)


def run_batch(cases: list[dict], watchdog_s: float = 20.0) -> tuple[Counter, list[dict]]:
    """Run ``cases`` in forked children (restarting after a crash or hang); returns (counts, failures)."""
    warm()
    counts: Counter = Counter()
    failures: list[dict] = []
    start = 0
    while start < len(cases):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            try:
                _child(write_fd, cases[start:])
            finally:
                os._exit(70)
        os.close(write_fd)
        reader = os.fdopen(read_fd, "r")
        current = None
        buffer = ""
        finished = False
        while True:
            ready, _, _ = select.select([reader], [], [], watchdog_s)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                if current is not None:
                    case = cases[start + current]
                    counts["hang"] += 1
                    failures.append({"outcome": "hang", "case": case, "detail": f"no answer in {watchdog_s} s"})
                    start += current + 1
                else:
                    start = len(cases)
                break
            chunk = os.read(reader.fileno(), 1 << 16).decode("utf-8", "replace")
            if not chunk:
                _, status = os.waitpid(pid, 0)
                if current is not None:
                    case = cases[start + current]
                    counts["crash"] += 1
                    why = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else \
                        f"exit status {os.WEXITSTATUS(status)}"
                    failures.append({"outcome": "crash", "case": case, "detail": why})
                    start += current + 1
                else:
                    finished = True
                break
            buffer += chunk
            *lines, buffer = buffer.split("\n")
            for line in lines:
                if line.startswith("S "):
                    current = int(line[2:])
                elif line.startswith("D "):
                    _, index, outcome, *rest = line.split(" ", 3)
                    counts[outcome] += 1
                    if outcome in FAILURES:
                        detail = rest[0].encode("ascii").decode("unicode_escape") if rest else ""
                        failures.append({"outcome": outcome, "case": cases[start + int(index)], "detail": detail})
                    current = None
        reader.close()
        if finished:
            break
    return counts, failures


def campaign(seed: int, n_cases: int, batch: int = 400, mix=(0.8, 0.1, 0.1), watchdog_s: float = 20.0,
             progress=None) -> tuple[Counter, list[dict]]:
    """``n_cases`` cases of campaign ``seed``, ``batch`` per child."""
    total: Counter = Counter()
    failures: list[dict] = []
    for first in range(0, n_cases, batch):
        cases = [make_case(seed, i, mix) for i in range(first, min(first + batch, n_cases))]
        counts, found = run_batch(cases, watchdog_s)
        total.update(counts)
        failures.extend(found)
        if progress:
            progress(first + len(cases), total)
    return total, failures


def summary(counts: Counter) -> str:
    cases = sum(counts.values())
    parts = [f"{cases} cases"] + [f"{k} {counts.get(k, 0)}" for k in ("ok", "error") + FAILURES]
    return ", ".join(parts)
