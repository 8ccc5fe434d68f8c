"""Lab `llm-step`: one decode step of a small transformer: where its time goes; what graphs and fusion buy.

The model (programs/llm/decode.cu, all real kernels): ``layers`` pre-norm blocks of hidden size
``model_dim``, ``heads`` attention heads and an MLP of width ``ffn_dim`` with SiLU; fp16 weights and KV
cache, fp32 activations. Per layer the unfused step runs 10 kernels: RMSNorm, QKV projection, attention
over the KV cache (appending this token's K and V), output projection, residual add, RMSNorm, up
projection, SiLU, down projection, residual add. The fused step folds the SiLU and both residual adds into
the projections' epilogues (7 kernels per layer, the same arithmetic, bit-identical output).

For each batch size the step runs four ways (eager / CUDA graph, unfused / fused) on the system model and
reports the step time, the time per kernel name and the time by regime. One untimed eager step runs
first: L2 persists across launches, so every variant finds the small model's weights in L2, as a decode
loop does from its second token on (otherwise the first variant alone would pay the cold misses and the
others would look faster for it). The regimes are each kernel's own verdict, by the report's rules
(``gpusim.observe.regime.classify`` of the metrics the timeline keeps per kernel):

- memory / compute / latency / launch: the time of kernels whose verdict is memory-, compute-,
  latency- or launch-bound (launch-bound: shorter than one host launch call with a grid under one wave
  -- the small model's kernels at batch 1);
- overhead: the rest of the step (host launch calls not hidden, launch latencies, the synchronize).

Extrapolation to a 70B fp16 model on ``h100-sxm``: a GEMV probe (``gemv`` with 4 column tiles per SM on
a slice of ``PROBE_SMS`` SMs, which keeps each SM's share of DRAM bandwidth) measures the share of peak
DRAM bandwidth the weight stream achieves (its own verdict, ``probe_verdict``, is the regime of a big
model's batch-1 GEMV: memory-bound at the default ``probe_k_dim``); the 70B step is then the weight
bytes over that share of the whole chip's bandwidth plus, per kernel, the GPU-side launch latency of this
step's kernel structure (the host's launch calls hide under kernels that long). Beside it, the analytic
bound: the weight bytes over the chip's peak DRAM bandwidth, derived from the probe's own metrics (bytes
moved, seconds and % of peak) scaled from the slice to the chip.

Simplifications: no embedding or LM head; non-gated MLP; one new token per sequence, all sequences at the
same position; the 70B extrapolation ignores the KV-cache traffic (small at short context) and uses
Llama-2-70B's 80 layers for the kernel count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpusim.labs.support import PROGRAMS_DIR, LabResult, format_table
from gpusim.observe.regime import classify

NAME = "llm-step"
TITLE = "One LLM decode step: memory, compute or overhead; graphs and fusion"

PROGRAM = PROGRAMS_DIR / "llm" / "decode.ptx"
DEFAULT_CONFIG = "h100-sxm"
GEMV_COLUMNS, GEMV_SLICES, GEMV_BATCH = 64, 8, 4  # decode.cu's #defines
GEMV_THREADS = 32  # threads per k-slice: two adjacent columns each
PROBE_SMS = 16  # the bandwidth probe's slice of the chip
PROBE_TILES_PER_SM = 4  # GEMV column tiles per SM in the probe: enough weight loads in flight (Little's law)
REGIMES = ("memory", "compute", "latency", "launch")
"""The kernel regimes of the breakdown: the families of the report's verdict kinds."""
NORM_THREADS, ATTN_THREADS, ELEMENTWISE_THREADS = 256, 128, 256
RMS_EPS = 1e-5
DRAM_METRIC = "dram__throughput.avg.pct_of_peak_sustained_elapsed"

# The extrapolation target: a 70B-parameter model in fp16, Llama-2-70B's depth.
BIG_MODEL_PARAMS = 70e9
BIG_MODEL_BYTES_PER_PARAM = 2
BIG_MODEL_LAYERS = 80
VARIANTS = (("eager", False, False), ("graph", False, True), ("fused", True, False),
            ("fused+graph", True, True))


@dataclass(frozen=True)
class ModelShape:
    """The small model's dimensions."""

    layers: int = 2
    model_dim: int = 256
    heads: int = 4
    ffn_dim: int = 1024
    context: int = 128  # tokens in the KV cache after this step (this token at position context - 1)

    @property
    def head_dim(self) -> int:
        return self.model_dim // self.heads

    def kernels_per_layer(self, fused: bool) -> int:
        return 7 if fused else 10


def make_weights(shape: ModelShape, seed: int = 0) -> list[dict]:
    """Per layer: fp16 weights (row-major [K][N]) and norm scales, scaled to keep activations O(1)."""
    rng = np.random.default_rng(seed)

    def matrix(k_dim: int, n_dim: int) -> np.ndarray:
        return (rng.standard_normal((k_dim, n_dim)) / math.sqrt(k_dim)).astype(np.float16)

    d, f = shape.model_dim, shape.ffn_dim
    return [{"norm1": (1.0 + 0.1 * rng.standard_normal(d)).astype(np.float16), "qkv": matrix(d, 3 * d),
             "o": matrix(d, d), "norm2": (1.0 + 0.1 * rng.standard_normal(d)).astype(np.float16),
             "up": matrix(d, f), "down": matrix(f, d)} for _ in range(shape.layers)]


def make_caches(shape: ModelShape, batch: int, seed: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per layer: K cache [b][h][d][max_seq] and V cache [b][h][max_seq][d], past positions filled."""
    rng = np.random.default_rng(seed)
    caches = []
    for _ in range(shape.layers):
        k_cache = rng.standard_normal((batch, shape.heads, shape.head_dim, shape.context)).astype(np.float16)
        v_cache = rng.standard_normal((batch, shape.heads, shape.context, shape.head_dim)).astype(np.float16)
        k_cache[..., shape.context - 1] = 0
        v_cache[:, :, shape.context - 1, :] = 0
        caches.append((k_cache, v_cache))
    return caches


def reference_step(shape: ModelShape, weights: list[dict], caches: list, x: np.ndarray) -> np.ndarray:
    """The decode step in numpy (float32 math, fp16 storage where the kernels store fp16)."""
    x = x.astype(np.float32).copy()
    pos, hd, d = shape.context - 1, shape.head_dim, shape.model_dim
    for layer, (k_cache, v_cache) in zip(weights, caches, strict=True):
        k_cache, v_cache = k_cache.copy(), v_cache.copy()

        def norm(values: np.ndarray, scale: np.ndarray) -> np.ndarray:
            inv = 1.0 / np.sqrt(np.mean(values * values, axis=1, keepdims=True) + np.float32(RMS_EPS))
            return values * inv * scale.astype(np.float32)

        qkv = norm(x, layer["norm1"]) @ layer["qkv"].astype(np.float32)
        q = qkv[:, :d].reshape(-1, shape.heads, hd)
        k_cache[..., pos] = qkv[:, d:2 * d].reshape(-1, shape.heads, hd).astype(np.float16)
        v_cache[:, :, pos, :] = qkv[:, 2 * d:].reshape(-1, shape.heads, hd).astype(np.float16)
        scores = np.einsum("bhd,bhdt->bht", q, k_cache.astype(np.float32)) / np.float32(math.sqrt(hd))
        probs = np.exp(scores - scores.max(axis=2, keepdims=True))
        probs /= probs.sum(axis=2, keepdims=True)
        attn = np.einsum("bht,bhtd->bhd", probs, v_cache.astype(np.float32)).reshape(-1, d)
        x = x + attn @ layer["o"].astype(np.float32)
        up = norm(x, layer["norm2"]) @ layer["up"].astype(np.float32)
        x = x + (up / (1.0 + np.exp(-up))) @ layer["down"].astype(np.float32)
    return x


class DecodeStep:
    """Device buffers of one batch size and the launches of one step on a stream."""

    def __init__(self, gpu: Any, module: Any, shape: ModelShape, batch: int,
                 weights: list[dict], caches: list):
        self.gpu, self.shape, self.batch = gpu, shape, batch
        self.kernels = {name: module[name] for name in ("rmsnorm", "gemv", "attention", "add", "silu")}
        to_device = gpu.to_device
        self.weights = [{key: to_device(value) for key, value in layer.items()} for layer in weights]
        self.caches = [(to_device(k_cache), to_device(v_cache)) for k_cache, v_cache in caches]
        self.initial_caches = caches
        d, f = shape.model_dim, shape.ffn_dim
        zeros = gpu.zeros
        self.x = zeros(batch * d, np.float32)
        self.h = zeros(batch * d, np.float32)
        self.qkv = zeros(batch * 3 * d, np.float32)
        self.attn = zeros(batch * d, np.float32)
        self.delta = zeros(batch * d, np.float32)
        self.up = zeros(batch * f, np.float32)

    def reset(self, x_host: np.ndarray) -> None:
        """Put the step's input back (host writes while the GPU is idle)."""
        self.x.set(x_host.reshape(-1))
        for (k_dev, v_dev), (k_cache, v_cache) in zip(self.caches, self.initial_caches, strict=True):
            k_dev.set(k_cache)
            v_dev.set(v_cache)

    def _gemv(self, stream: Any, y: Any, x: Any, w: Any, residual: Any, k_dim: int,
              n_dim: int, act: int) -> None:
        grid = ((n_dim + GEMV_COLUMNS - 1) // GEMV_COLUMNS, (self.batch + GEMV_BATCH - 1) // GEMV_BATCH)
        stream.launch(self.kernels["gemv"], grid, (GEMV_THREADS, GEMV_SLICES),
                      [y, x, w, residual, np.int32(k_dim), np.int32(n_dim), np.int32(self.batch),
                       np.int32(act)])

    def _elementwise(self, stream: Any, name: str, args: list, count: int) -> None:
        blocks = (count + ELEMENTWISE_THREADS - 1) // ELEMENTWISE_THREADS
        stream.launch(self.kernels[name], blocks, ELEMENTWISE_THREADS, args + [np.int32(count)])

    def issue(self, stream: Any, fused: bool) -> None:
        """Launch one decode step's kernels on ``stream``."""
        shape, batch = self.shape, self.batch
        d, f = shape.model_dim, shape.ffn_dim
        eps = np.float32(RMS_EPS)
        for layer, (k_cache, v_cache) in zip(self.weights, self.caches, strict=True):
            stream.launch(self.kernels["rmsnorm"], batch, NORM_THREADS, [self.h, self.x, layer["norm1"],
                                                                         np.int32(d), eps])
            self._gemv(stream, self.qkv, self.h, layer["qkv"], 0, d, 3 * d, 0)
            stream.launch(self.kernels["attention"], (shape.heads, batch), ATTN_THREADS,
                          [self.attn, self.qkv, k_cache, v_cache, np.int32(shape.context - 1),
                           np.int32(shape.heads), np.int32(shape.head_dim), np.int32(shape.context),
                           np.float32(1.0 / math.sqrt(shape.head_dim))])
            if fused:
                self._gemv(stream, self.x, self.attn, layer["o"], self.x, d, d, 0)
            else:
                self._gemv(stream, self.delta, self.attn, layer["o"], 0, d, d, 0)
                self._elementwise(stream, "add", [self.x, self.x, self.delta], batch * d)
            stream.launch(self.kernels["rmsnorm"], batch, NORM_THREADS, [self.h, self.x, layer["norm2"],
                                                                         np.int32(d), eps])
            if fused:
                self._gemv(stream, self.up, self.h, layer["up"], 0, d, f, 1)
                self._gemv(stream, self.x, self.up, layer["down"], self.x, f, d, 0)
            else:
                self._gemv(stream, self.up, self.h, layer["up"], 0, d, f, 0)
                self._elementwise(stream, "silu", [self.up, self.up], batch * f)
                self._gemv(stream, self.delta, self.up, layer["down"], 0, f, d, 0)
                self._elementwise(stream, "add", [self.x, self.x, self.delta], batch * d)


def kernel_regime(kernel_details: dict, config: Any) -> str:
    """memory, compute, latency or launch: the family of the kernel's own verdict, by the report's rules,
    from the metrics (and stalls) a timeline span keeps."""
    stalls = kernel_details.get("stalls") or None
    return classify(kernel_details.get("metrics", {}), config, stalls).family


def breakdown(timeline: Any, start_s: float, end_s: float, config: Any) -> dict:
    """Step time split by kernel name and by regime (memory / compute / latency / launch, from each
    kernel's verdict, and overhead), in microseconds."""
    by_kernel: dict[str, float] = {}
    by_kernel_regime: dict[str, dict[str, float]] = {}
    regimes = dict.fromkeys(REGIMES, 0.0)
    spans = timeline.kernels(start_s, end_s)
    for span in spans:
        duration_us = span.duration_s * 1e6
        regime = kernel_regime(span.args, config)
        by_kernel[span.name] = by_kernel.get(span.name, 0.0) + duration_us
        mine = by_kernel_regime.setdefault(span.name, {})
        mine[regime] = mine.get(regime, 0.0) + duration_us
        regimes[regime] += duration_us
    regimes["overhead"] = (end_s - start_s) * 1e6 - sum(regimes[r] for r in REGIMES)
    return {"step_us": (end_s - start_s) * 1e6, "kernels": len(spans), "by_kernel_us": by_kernel,
            "by_kernel_regime_us": by_kernel_regime, "by_regime_us": regimes}


def measure_batch(gpu: Any, module: Any, shape: ModelShape, batch: int, seed: int = 0) -> dict:
    """The four variants of one decode step at one batch size, each checked against numpy."""
    weights = make_weights(shape, seed)
    caches = make_caches(shape, batch, seed + 1)
    x_host = np.random.default_rng(seed + 2).standard_normal((batch, shape.model_dim)).astype(np.float32)
    expected = reference_step(shape, weights, caches, x_host)
    step = DecodeStep(gpu, module, shape, batch, weights, caches)
    system = gpu.system
    stream = gpu.stream()
    results: dict = {}
    step.reset(x_host)
    step.issue(stream, fused=False)  # warm-up: the weights into L2, as from a decode loop's second token
    for variant, fused, use_graph in VARIANTS:
        gpu.synchronize()
        step.reset(x_host)
        graph = None
        if use_graph:
            graph = gpu.graph()
            with graph.capture(stream):
                step.issue(stream, fused)
            graph.instantiate()
        start_s = system.host_time_s
        if graph is not None:
            graph.replay(stream)
        else:
            step.issue(stream, fused)
        stream.synchronize()
        result = breakdown(system.timeline, start_s, system.host_time_s, gpu.config)
        output = step.x.get().reshape(batch, shape.model_dim)
        result["output"] = output
        result["max_error"] = float(np.max(np.abs(output - expected)))
        result["reference_match"] = bool(np.allclose(output, expected, rtol=2e-3, atol=2e-3))
        results[variant] = result
    return results


def probe_weight_bandwidth(gpu: Any, module: Any, k_dim: int = 1024) -> dict:
    """A batch-1 GEMV with PROBE_TILES_PER_SM column tiles per SM on ``gpu`` (a slice of the chip):
    achieved and peak DRAM bandwidth of the slice in bytes/s, and the achieved share of the peak."""
    n_dim = PROBE_TILES_PER_SM * GEMV_COLUMNS * int(gpu.config.sms)
    rng = np.random.default_rng(3)
    w = gpu.to_device((rng.standard_normal((k_dim, n_dim)) / math.sqrt(k_dim)).astype(np.float16))
    x = gpu.to_device(rng.standard_normal(k_dim).astype(np.float32))
    y = gpu.zeros(n_dim, np.float32)
    run = gpu.launch(module["gemv"], grid=(n_dim // GEMV_COLUMNS, 1), block=(GEMV_THREADS, GEMV_SLICES),
                     args=[y, x, w, 0, np.int32(k_dim), np.int32(n_dim), np.int32(1), np.int32(0)])
    weight_bytes = k_dim * n_dim * 2
    metrics = run.metrics
    moved_bytes = (float(metrics.get("dram__bytes_read.sum", 0.0))
                   + float(metrics.get("dram__bytes_write.sum", 0.0)))
    dram_pct = float(metrics.get(DRAM_METRIC, 0.0))
    peak = moved_bytes / float(run.seconds) / (dram_pct / 100.0) if dram_pct > 0.0 else float("nan")
    achieved = weight_bytes / float(run.seconds)
    return {"achieved_Bps": achieved, "peak_Bps": peak, "achieved_share": achieved / peak,
            "weight_bytes": weight_bytes, "seconds": float(run.seconds), "dram_pct": dram_pct,
            "verdict": classify(metrics, run.config, run.stalls).kind}


def scale_probe_to_chip(probe: dict, slice_config: Any, chip_config: Any) -> dict:
    """The probe's bandwidths for the whole chip: a slice keeps each SM's share of DRAM bandwidth."""
    factor = float(chip_config.dram_bandwidth_gbs) / float(slice_config.dram_bandwidth_gbs)
    return dict(probe, achieved_Bps=probe["achieved_Bps"] * factor, peak_Bps=probe["peak_Bps"] * factor)


def extrapolate_big_model(config: Any, probe: dict, kernels_per_layer: int, graph: bool) -> dict:
    """70B fp16 decode step at batch 1: simulated-bandwidth estimate beside the analytic bound, in ms."""
    weight_bytes = BIG_MODEL_PARAMS * BIG_MODEL_BYTES_PER_PARAM
    kernels = BIG_MODEL_LAYERS * kernels_per_layer
    latency_s = float(config.kernel_launch_latency_cycles) / (float(config.core_clock_mhz) * 1e6)
    per_kernel_s = float(config.graph_kernel_gpu_us) * 1e-6 if graph else latency_s
    memory_s = weight_bytes / probe["achieved_Bps"]
    overhead_s = kernels * per_kernel_s
    return {"weight_gb": weight_bytes / 1e9, "kernels": kernels, "memory_ms": memory_s * 1e3,
            "overhead_ms": overhead_s * 1e3, "step_ms": (memory_s + overhead_s) * 1e3,
            "bound_ms": weight_bytes / probe["peak_Bps"] * 1e3,
            "tokens_per_s": 1.0 / (memory_s + overhead_s)}


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *,
        batches: tuple[int, ...] = (1, 8), shape: ModelShape | None = None, probe_k_dim: int = 1024,
        overrides: dict | None = None) -> LabResult:
    """Run the lab on ``config`` (default h100-sxm); ``overrides`` are config fields for GPU()."""
    from gpusim.api.gpu import GPU

    config_name = DEFAULT_CONFIG if config is None else config
    shape = shape or ModelShape()
    gpu = GPU(config_name, **(overrides or {}))
    module = gpu.load(str(PROGRAM))
    values: dict = {"config": str(config_name), "batches": list(batches)}
    rows, kernel_rows = [], []
    per_batch: dict = {}
    for batch in batches:
        if progress:
            print(f"[llm-step] {config_name}: batch {batch}")
        results = measure_batch(gpu, module, shape, batch)
        per_batch[batch] = results
        eager_us = results["eager"]["step_us"]
        for variant, _, _ in VARIANTS:
            result = results[variant]
            regimes = result["by_regime_us"]
            key = f"b{batch}_{variant}"
            values[f"{key}_step_us"] = result["step_us"]
            values[f"{key}_kernels"] = result["kernels"]
            values[f"{key}_reference_match"] = result["reference_match"]
            for regime, regime_us in regimes.items():
                values[f"{key}_{regime}_us"] = regime_us
            rows.append([batch, variant, result["kernels"], result["step_us"], eager_us / result["step_us"],
                         *(regimes[regime] for regime in REGIMES), regimes["overhead"],
                         100.0 * regimes["overhead"] / result["step_us"]])
        values[f"b{batch}_outputs_match"] = all(
            np.array_equal(results[variant]["output"], results["eager"]["output"])
            for variant, _, _ in VARIANTS)
        values[f"b{batch}_graph_gain"] = eager_us / results["graph"]["step_us"]
        values[f"b{batch}_fusion_gain"] = eager_us / results["fused"]["step_us"]
        values[f"b{batch}_graph_fusion_gain"] = eager_us / results["fused+graph"]["step_us"]
        eager = results["eager"]
        for name, kernel_us in sorted(eager["by_kernel_us"].items(), key=lambda item: -item[1]):
            split = eager["by_kernel_regime_us"][name]
            verdicts = ", ".join(f"{regime} {split[regime]:.1f}" for regime in REGIMES if regime in split)
            kernel_rows.append([batch, name, kernel_us, 100.0 * kernel_us / eager_us, verdicts])

    probe_gpu = GPU(config_name, **dict(overrides or {}, sms=min(PROBE_SMS, int(gpu.config.sms))))
    probe_slice = probe_weight_bandwidth(probe_gpu, probe_gpu.load(str(PROGRAM)), probe_k_dim)
    probe = scale_probe_to_chip(probe_slice, probe_gpu.config, gpu.config)
    big_eager = extrapolate_big_model(gpu.config, probe, shape.kernels_per_layer(False), graph=False)
    big_graph = extrapolate_big_model(gpu.config, probe, shape.kernels_per_layer(True), graph=True)
    for key, number in big_eager.items():
        values[f"big_{key}"] = number
    values["big_graph_fused_step_ms"] = big_graph["step_ms"]
    values["probe_achieved_gbs"] = probe["achieved_Bps"] / 1e9
    values["probe_peak_gbs"] = probe["peak_Bps"] / 1e9
    values["probe_achieved_share"] = probe["achieved_share"]
    values["probe_dram_pct"] = probe["dram_pct"]
    values["probe_verdict"] = probe["verdict"]

    table = format_table(["batch", "variant", "kernels", "step us", "speed-up",
                          *(f"{regime} us" for regime in REGIMES), "overhead us", "overhead %"], rows)
    table += "\n\nby kernel (eager), with the us of each verdict:\n" + format_table(
        ["batch", "kernel", "us", "% of step", "us by verdict"], kernel_rows)
    table += (f"\n\n70B fp16 on {config_name}, batch 1: {big_eager['weight_gb']:.0f} GB of weights at the "
              f"probe's {values['probe_achieved_gbs']:.0f} GB/s = {big_eager['memory_ms']:.1f} ms + "
              f"{big_eager['kernels']} kernels x launch latency = {big_eager['overhead_ms']:.2f} ms -> "
              f"{big_eager['step_ms']:.1f} ms/token ({big_eager['tokens_per_s']:.1f} tokens/s); "
              f"analytic bound "
              f"(peak {values['probe_peak_gbs']:.0f} GB/s) {big_eager['bound_ms']:.1f} ms; fused + graph "
              f"{big_graph['step_ms']:.1f} ms; the probe GEMV's own verdict: {values['probe_verdict']} "
              f"(DRAM at {values['probe_dram_pct']:.0f}% of peak)")
    first = batches[0]
    lesson = (
        f"The small model's step at batch {first} is mostly overhead "
        f"({values[f'b{first}_eager_overhead_us'] / values[f'b{first}_eager_step_us'] * 100:.0f}% of "
        f"{values[f'b{first}_eager_step_us']:.0f} us): each of its "
        f"{values[f'b{first}_eager_kernels']} kernels "
        f"is too small to hide the launch cost, and the kernels' own verdicts say the same: "
        f"{values[f'b{first}_eager_launch_us']:.0f} us of kernel time is launch-bound, "
        f"{values[f'b{first}_eager_latency_us']:.0f} us latency-bound, "
        f"{values[f'b{first}_eager_compute_us']:.0f} us compute-bound, "
        f"{values[f'b{first}_eager_memory_us']:.0f} us memory-bound"
        + (" (the weights sit in L2 and no GEMV is big enough to fill the chip)"
           if values[f"b{first}_eager_memory_us"] < 0.1 * values[f"b{first}_eager_step_us"] else "")
        + f". A CUDA graph gives {values[f'b{first}_graph_gain']:.2f}x, "
        f"fusing the elementwise ops {values[f'b{first}_fusion_gain']:.2f}x, both "
        f"{values[f'b{first}_graph_fusion_gain']:.2f}x. Larger batches reuse each weight for more rows at "
        f"almost the same step time. At 70B the same structure is memory-bound: streaming "
        f"{big_eager['weight_gb']:.0f} GB of weights takes {big_eager['memory_ms']:.1f} ms against "
        f"{big_eager['overhead_ms']:.2f} ms of launch latency: "
        f"{big_eager['step_ms'] / big_eager['bound_ms']:.2f}x the bandwidth bound of "
        f"{big_eager['bound_ms']:.1f} ms, because the probe GEMV streams its weights at "
        f"{100.0 * probe['achieved_share']:.0f}% of peak DRAM bandwidth; that GEMV, big enough to fill its "
        f"slice, is {values['probe_verdict']} by its own verdict."
    )
    figures: list[Path] = []
    if plot_dir is not None:
        out_dir = Path(plot_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        figures = _plot(per_batch, out_dir)
        figures.append(gpu.timeline.to_chrome(out_dir / "llm_step_timeline.json"))
    if progress:
        print(table)
    return LabResult(name=NAME, title=TITLE, table=table, lesson=lesson, values=values, figures=figures)


def _plot(per_batch: dict, plot_dir: Path) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    figure, axes = plt.subplots(figsize=(9, 4))
    labels, bottoms = [], []
    stacks: dict[str, list[float]] = {regime: [] for regime in (*REGIMES, "overhead")}
    for batch, results in per_batch.items():
        for variant, _, _ in VARIANTS:
            labels.append(f"b{batch}\n{variant}")
            for regime in stacks:
                stacks[regime].append(results[variant]["by_regime_us"][regime])
    bottoms = [0.0] * len(labels)
    for regime, heights in stacks.items():
        axes.bar(labels, heights, bottom=bottoms, label=regime)
        bottoms = [low + height for low, height in zip(bottoms, heights, strict=True)]
    axes.set_ylabel("us per decode step")
    axes.legend()
    figure.tight_layout()
    path = plot_dir / "llm_step.png"
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return [path]
