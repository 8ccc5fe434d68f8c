"""The project's own fuzz suite (tests/fuzz_lib.py): mutation fuzzing of the shipped PTX corpus and hostile
launches and configs, every case in a forked child under a watchdog, plus hypothesis property tests of the
launch and config APIs (each example in a forked child too). The default run takes a fast seeded subset;
``-m slow`` runs a longer campaign (``scripts/fuzz_campaign.py`` runs the full one and prints its counts).
A finding fails the test with the case that caused it, reproducible from its seed and index."""

import os
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import fuzz_lib as F


def _report(failures) -> str:
    lines = []
    for f in failures[:5]:
        case = f["case"]
        lines.append(f"{f['outcome']} in {case['kind']} case {case['index']} ({case.get('source')}): "
                     f"{f['detail'][:600]}")
    return "\n".join(lines)


def test_fuzz_fast_subset():
    """800 seeded cases (front end, launches, API): no crash, raw exception, internal error, leak or hang."""
    counts, failures = F.campaign(seed=20240601, n_cases=800, batch=400, mix=(0.8, 0.1, 0.1), watchdog_s=60)
    assert sum(counts.values()) == 800
    assert not failures, _report(failures)
    assert counts["error"] > 0 and counts["ok"] > 0      # the fuzzer reaches both outcomes


def test_watchdog_sees_a_crash_and_a_hang(monkeypatch):
    """The harness itself: a case that kills its child and one that never answers are both counted and
    attributed to the right case, and the cases after them still run."""
    def fake_run_case(ctx, case):
        if case["index"] == 2:
            os.kill(os.getpid(), 9)
        if case["index"] == 4:
            import time
            time.sleep(30)
        return "ok", ""

    monkeypatch.setattr(F, "run_case", fake_run_case)
    monkeypatch.setattr(F, "Context", lambda: None)
    counts, failures = F.run_batch([{"kind": "api", "index": i} for i in range(7)], watchdog_s=2)
    assert counts == {"ok": 5, "crash": 1, "hang": 1}
    assert [(f["outcome"], f["case"]["index"]) for f in failures] == [("crash", 2), ("hang", 4)]


@pytest.mark.slow
def test_fuzz_campaign_slow():
    counts, failures = F.campaign(seed=7, n_cases=20_000, batch=500, watchdog_s=60)
    assert not failures, _report(failures)


# ---------------------------------------------------------------- hypothesis, each example forked
def forked(fn, *args):
    """Run ``fn(*args)`` in a forked child; (outcome, detail) as fuzz_lib.run_case classifies it, or
    ``crash``/``hang``."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        import warnings

        warnings.simplefilter("ignore")
        from gpusim.errors import GpusimError, InternalError
        try:
            fn(*args)
            result = ("ok", "")
        except InternalError as exc:
            result = ("internal", str(exc))
        except GpusimError as exc:
            result = ("error", type(exc).__name__)
        except Exception as exc:   # noqa: BLE001
            result = ("raw", f"{type(exc).__name__}: {exc}")
        os.write(write_fd, pickle.dumps(result))
        os._exit(0)
    os.close(write_fd)
    import select

    ready, _, _ = select.select([read_fd], [], [], 60)
    if not ready:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return "hang", ""
    data = b""
    while chunk := os.read(read_fd, 1 << 16):
        data += chunk
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if not data:
        return "crash", f"status {status}"
    return pickle.loads(data)


_GPU = None


def _gpu():
    global _GPU
    if _GPU is None:
        import gpusim

        _GPU = gpusim.GPU("teaching", sms=1)
        _GPU.saxpy = _GPU.load_ptx(dict(F.corpus_texts())["programs/saxpy.ptx"])["saxpy"]
        F.warm()
    return _GPU


_values = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4),
                    st.tuples(st.integers(-3, 70000), st.integers(-3, 70000)),
                    st.lists(st.integers(-2, 2**33), max_size=4))

HYPOTHESIS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _launch(grid, block, shared, regs, trace, limit, timing, n):
    gpu = _gpu()
    x, y = gpu.zeros(64), gpu.zeros(64)
    gpu.launch(gpu.saxpy, grid, block, [n, 2.0, x, y], shared, timing=timing, regs=regs, trace=trace,
               max_warp_instructions=limit)


@HYPOTHESIS
@given(grid=_values, block=_values, shared=_values, regs=_values, trace=_values, limit=_values,
       timing=st.one_of(st.booleans(), _values), n=_values)
def test_launch_api_never_fails_raw(grid, block, shared, regs, trace, limit, timing, n):
    _gpu()
    outcome, detail = forked(_launch, grid, block, shared, regs, trace, limit, timing, n)
    assert outcome in ("ok", "error"), detail


@HYPOTHESIS
@given(field=st.sampled_from(sorted(__import__("gpusim.arch.config", fromlist=["FIELDS"]).FIELDS)), value=_values)
def test_config_api_never_fails_raw(field, value):
    import gpusim

    outcome, detail = forked(lambda: gpusim.GPU("teaching", **{field: value}))
    assert outcome in ("ok", "error"), detail


def _saxpy_result(n, a):
    from gpusim.errors import GpusimError

    gpu = _gpu()
    for bad in (dict(grid=0), dict(shared_bytes=float("nan")), dict(regs=10**9)):
        try:
            gpu.launch(gpu.saxpy, **{"grid": 1, "block": 32, "args": [n, a, gpu.zeros(1), gpu.zeros(1)], **bad})
        except GpusimError:
            pass
    x = gpu.to_device(np.arange(64, dtype=np.float32))
    y = gpu.to_device(np.ones(64, dtype=np.float32))
    gpu.launch(gpu.saxpy, 2, 32, [n, a, x, y], timing=False)
    expected = np.ones(64, dtype=np.float32)
    expected[:n] = _fma32(np.float32(a), np.arange(64, dtype=np.float32)[:n], np.float32(1))   # fma.rn.f32
    np.testing.assert_array_equal(y.get(), expected)


def _fma32(a, x, y):
    """float32 fma, rounded once: the product of two float32 is exact in float64; TwoSum keeps the sum's
    rounding error, which decides a float64 sum that falls exactly halfway between two float32."""
    p = np.float64(a) * x.astype(np.float64)
    s = p + np.float64(y)
    bp = s - p
    err = (p - (s - bp)) + (np.float64(y) - bp)
    r = s.astype(np.float32)
    lo, hi = np.nextafter(r, np.float32(-np.inf)), np.nextafter(r, np.float32(np.inf))
    halfway_lo = (s == (r.astype(np.float64) + lo.astype(np.float64)) / 2) & (err < 0)
    halfway_hi = (s == (r.astype(np.float64) + hi.astype(np.float64)) / 2) & (err > 0)
    return np.where(halfway_lo, lo, np.where(halfway_hi, hi, r)).astype(np.float32)


@HYPOTHESIS
@given(n=st.integers(0, 64), a=st.floats(-1e3, 1e3, width=32))
def test_saxpy_after_hostile_launches_is_still_exact(n, a):
    """The GPU object stays usable and exact: saxpy's result equals numpy's, in a forked child."""
    outcome, detail = forked(_saxpy_result, n, a)
    assert outcome == "ok", detail
