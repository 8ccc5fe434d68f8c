"""Whole workloads at the sizes people run them (issue 26): host time, simulation rates, slowdown against the
modelled hardware, and what sampled simulation gives on each. Not a test: it prints (and with ``--record``
stores) figures; docs/design.md's workload table is rendered from ``benchmarks/results/workloads.json``.

Workloads, each on the whole chip of its config and checked against numpy:

- ``sgemm4096``: C = A B at 4096^3 in fp32 by the 2D block-tiled SGEMM (validation/kernels/sgemm_ladder.cu
  ``sgemm_blocktile_2d``, 128 x 128 tiles, 256 threads) on ``a100``;
- ``decode70b``: one transformer layer of a 70B-class model (hidden 8192, 64 heads, MLP 28672; 1.5 GB of fp16
  weights, a 1024-token KV cache) at batch 1 by programs/llm/decode.cu's kernels (the llm-step lab's step,
  eager and unfused: 10 launches) on ``h100-sxm``; a 70B step is 80 such layers;
- ``prefill``: a 1024-token prefill through a 4096 x 4096 bf16 layer by programs/gemm_hopper.cu's persistent
  wgmma + TMA kernel (the prefill lab's ``prefill-wgmma`` phase) on ``h100-sxm``.

Per workload: one run with ``sampling="auto"``; when it sampled, one full run too (the sampled figure's error
and the host-time ratio). When sampling declined (``run.sampling.reason``: too few waves, grid-wide
dependencies, ...), that run was the full simulation and its figures are the full ones.

    python benchmarks/bench_workloads.py [--only sgemm4096,decode70b,prefill] [--quick] [--record]

``--quick`` runs each workload at a small size (a smoke test of the script; nothing is recorded).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gpusim  # noqa: E402  (path set up above so the script runs from a checkout)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "workloads.json"


class TimedGPU(gpusim.GPU):
    """A GPU that keeps its launches' runs and adds up the host seconds they took (not loading or copies)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.launch_seconds = 0.0
        self.runs: list = []

    def launch(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            run = super().launch(*args, **kwargs)
        finally:
            self.launch_seconds += time.perf_counter() - start
        self.runs.append(run)
        return run


def _sgemm(gpu: TimedGPU, quick: bool) -> tuple[bool, str]:
    n = 512 if quick else 4096
    kernel = gpu.load(str(ROOT / "validation" / "kernels" / "sgemm_ladder.ptx"))["sgemm_blocktile_2d"]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    dc = gpu.zeros(n * n, np.float32)
    gpu.launch(kernel, grid=(n // 128, n // 128), block=(256,),
               args=[np.int32(n), np.float32(1.0), gpu.to_device(a), gpu.to_device(b), np.float32(0.0), dc])
    ok = bool(np.allclose(dc.get().reshape(n, n), a @ b, rtol=1e-3, atol=1e-2 * np.sqrt(n)))
    return ok, f"{n}^3 fp32, 128 x 128 tiles"


def _decode(gpu: TimedGPU, quick: bool) -> tuple[bool, str]:
    from gpusim.labs import llm_step
    shape = (llm_step.ModelShape(layers=1, model_dim=1024, heads=8, ffn_dim=3584, context=256) if quick else
             llm_step.ModelShape(layers=1, model_dim=8192, heads=64, ffn_dim=28672, context=1024))
    module = gpu.load(str(llm_step.PROGRAM))
    weights = llm_step.make_weights(shape, 0)
    caches = llm_step.make_caches(shape, 1, 1)
    x = np.random.default_rng(2).standard_normal((1, shape.model_dim)).astype(np.float32)
    expected = llm_step.reference_step(shape, weights, caches, x)
    step = llm_step.DecodeStep(gpu, module, shape, 1, weights, caches)
    step.reset(x)
    stream = gpu.stream()
    step.issue(stream, fused=False)
    stream.synchronize()
    out = step.x.get().reshape(1, shape.model_dim)
    ok = bool(np.allclose(out, expected, rtol=2e-3, atol=2e-3))
    weight_gb = sum(w.nbytes for layer in weights for w in layer.values()) / 1e9
    return ok, (f"one layer, hidden {shape.model_dim}, MLP {shape.ffn_dim}, {shape.heads} heads, "
                f"{shape.context}-token cache, batch 1, {weight_gb:.2f} GB of weights")


def _prefill(gpu: TimedGPU, quick: bool) -> tuple[bool, str]:
    from gpusim.labs.tensor_gemm import layer_gemm
    rows, k, tokens = (1024, 1024, 256) if quick else (4096, 4096, 1024)
    layer = layer_gemm(gpu, "bf16-wgmma", rows, k)
    _, correct = layer.run(tokens)
    return bool(correct), f"{tokens} tokens through a {rows} x {k} bf16 layer (wgmma + TMA)"


WORKLOADS = {"sgemm4096": ("a100", _sgemm), "decode70b": ("h100-sxm", _decode), "prefill": ("h100-sxm", _prefill)}


def _figures(gpu: TimedGPU) -> dict:
    runs = gpu.runs
    cycles = sum(run.cycles for run in runs)
    seconds = sum(run.seconds for run in runs)
    insts = sum(run.warp_instructions for run in runs)
    host = gpu.launch_seconds
    low = sum(run.cycles_interval[0] for run in runs)
    high = sum(run.cycles_interval[1] for run in runs)
    return {"launches": len(runs), "cycles": cycles, "cycles_interval": [low, high], "simulated_s": seconds,
            "warp_instructions": insts, "host_s": host, "m_warp_inst_per_s": insts / host / 1e6,
            "m_cycles_per_s": cycles / host / 1e6, "slowdown": host / seconds,
            "sampled_launches": sum(bool(run.sampled) for run in runs),
            "fraction_timed": (sum(run.sampling.blocks_timed for run in runs)
                               / max(1, sum(run.sampling.blocks for run in runs))),
            "reasons": sorted({run.sampling.reason for run in runs if run.sampling.reason})}


def sources_stamp() -> str:
    """Hash of this benchmark's source: workloads.json's figures are from it as written."""
    import hashlib

    return hashlib.sha256(Path(__file__).resolve().read_bytes()).hexdigest()[:24]


def measure(name: str, quick: bool) -> dict:
    config, body = WORKLOADS[name]
    gpu = TimedGPU(config, sampling="auto")
    ok, what = body(gpu, quick)
    row = {"workload": name, "config": config, "what": what, "sampled_ok": ok, "sampled": _figures(gpu)}
    if row["sampled"]["sampled_launches"]:
        full_gpu = TimedGPU(config)
        row["full_ok"], _ = body(full_gpu, quick)
        row["full"] = _figures(full_gpu)
        row["error_pct"] = 100.0 * (row["sampled"]["cycles"] / row["full"]["cycles"] - 1.0)
        low, high = row["sampled"]["cycles_interval"]
        row["covers"] = low <= row["full"]["cycles"] <= high
        row["host_ratio"] = row["full"]["host_s"] / row["sampled"]["host_s"]
    else:     # sampling declined every launch: that run was the full simulation
        row["full_ok"], row["full"] = ok, row["sampled"]
    return row


def _line(row: dict) -> str:
    full, sampled = row["full"], row["sampled"]
    text = (f"{row['workload']:10s} {row['config']:9s} {full['cycles']:>12,} cycles  {full['host_s']:8.1f} s host  "
            f"{full['m_warp_inst_per_s']:5.2f} M warp-inst/s  {full['m_cycles_per_s']:6.3f} M cycles/s  "
            f"slowdown {full['slowdown']:,.0f}x  ok={row['full_ok']}")
    if "error_pct" in row:
        text += (f"\n{'':10s} sampled: {sampled['cycles']:,} cycles ({row['error_pct']:+.2f} %, interval "
                 f"{'covers' if row['covers'] else 'misses'}), {sampled['host_s']:.1f} s host "
                 f"({row['host_ratio']:.1f}x less), {100 * sampled['fraction_timed']:.0f} % of blocks timed")
    else:
        kinds: dict[str, int] = {}
        for reason in sampled["reasons"]:
            kinds[reason.split(":")[0]] = kinds.get(reason.split(":")[0], 0) + 1
        text += f"\n{'':10s} sampling declined: " + "; ".join(f"{k} ({n} kernels)" if n > 1 else k
                                                             for k, n in kinds.items())
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma-separated workloads (default: all)")
    parser.add_argument("--quick", action="store_true", help="small sizes; records nothing")
    parser.add_argument("--record", action="store_true", help=f"store the figures in {RESULTS.relative_to(ROOT)}")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(WORKLOADS)
    unknown = sorted(set(names) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
    gpusim.warm_up()
    rows = []
    for name in names:
        row = measure(name, args.quick)
        print(_line(row), flush=True)
        rows.append(row)
    if args.record and not args.quick:
        stored = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"workloads": {}}
        for row in rows:
            stored["workloads"][row["workload"]] = row
        stored["stamp"] = sources_stamp()
        stored["host"] = {"cpus": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version(),
                          "load_average": os.getloadavg()[0], "date": time.strftime("%Y-%m-%d")}
        RESULTS.write_text(json.dumps(stored, indent=1) + "\n")
        print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
