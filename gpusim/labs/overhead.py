"""Lab `overhead`: what a kernel launch costs, and the three ways around it.

A chain of N small elementwise kernels (programs/overhead/chain.cu, ``step``: x = x * scale + bias, in
place), each reading the previous one's output, runs four ways on the system model (gpusim.host.system):

(a) a synchronize after each launch: every kernel pays the host launch call, the GPU launch latency,
    the kernel and the synchronize's wake-up, one after another;
(b) back to back, one synchronize at the end: the host's launch calls overlap the running kernels, so
    each kernel costs max(host launch call, GPU launch latency + kernel) plus the end synchronize / N;
(c) captured once in a CUDA graph and replayed: one host call for all N kernels and a smaller GPU-side
    cost per kernel;
(d) fused into one kernel (``fused``) that applies the N steps in registers: one launch, one pass over
    memory.

It reports the cost per kernel, the share of time the GPU is idle, and the nvidia-smi-style
"utilization" (any kernel running) beside the SM issue activity and DRAM throughput over the same
window: back-to-back launches look well utilized while the SMs are nearly idle.

Calibration and validation are kept apart. On `v100` it shows NVIDIA's CUDA-graphs measurements (the
"Getting Started with CUDA Graphs" blog, V100, CUDA 10.1: a 2.9 us kernel costs 9.6 us per launch with a
synchronize after each, 3.8 us back to back, 3.4 us in a graph; N = 20 kernels per synchronize):
configs/v100.toml's host costs were solved from those three figures, so agreeing with them is calibration,
not evidence. The evidence is the comparison with figures that set no parameter (``PUBLISHED_CHAIN``: a
chain of no-op kernels launched N at a time with one synchronize, and the same chain as a graph, on another
GPU, driver and CUDA 13.3), printed with its error whatever the config. To compare like with like, the
element count is searched (doubling, then bisection on the block count) so that one simulated kernel lasts
``target_kernel_us`` in the state it runs in inside the chain: L2 persists across launches, so every
kernel after the first finds its array in L2 (the blog's 4 MB of arrays also fit V100's 6 MB L2). The
chain works in place, so the array stays L2-resident at that duration on any ``sms`` slice (an L2 slice
streams its whole capacity in about 2.5 us on v100, which a ping-pong pair of arrays would exceed), and a
warm-up launch before the measured windows puts it there.

Simplifications: the no-op kernel of the published chain is stood in for by one block of ``step`` (its
simulated duration on the config); the per-kernel model cost (the ``model_*`` values) is the system
model's arithmetic with the measured kernel duration; the published numbers include the CPU-side loop,
which is not modelled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpusim.labs.support import PROGRAMS_DIR, LabResult, format_table

NAME = "overhead"
TITLE = "Launch overhead: synchronize after each, back to back, CUDA graph, fused"

PROGRAM = PROGRAMS_DIR / "overhead" / "chain.ptx"
DEFAULT_CONFIG = "v100"
# A slice of 8 SMs by default: the kernel is sized to the target duration on any slice and the overheads
# do not depend on the SM count, while the simulation is ten times faster than on V100's 80 SMs.
DEFAULT_OVERRIDES = {"sms": 8}
BLOCK_THREADS = 256
SCALE = np.float32(0.999)
BIAS = np.float32(0.001)

# NVIDIA, "Getting Started with CUDA Graphs" (V100, CUDA 10.1): microseconds per kernel, 20 kernels per step.
NVIDIA_V100_US = {"kernel": 2.9, "sync_each": 9.6, "back_to_back": 3.8, "graph": 3.4}
NVIDIA_KERNELS_PER_STEP = 20
# Not used to set any config's host costs (independent of NVIDIA's blog and of the cuLaunchKernel figure in
# gpu-specs): github.com/ahrefs/ocannl/issues/488 (2026-07-30), a standalone CUDA probe on an RTX 5070 Ti
# Laptop (sm_120, driver 610.62, CUDA 13.3, WSL2), median of 200 repetitions: N no-op kernels launched back
# to back then one synchronize, and the same chain captured as a graph and replayed then one synchronize
# (total us per step), and the host's enqueue cost per launch with the synchronize outside the timed region.
PUBLISHED_CHAIN_SOURCE = ("ocannl issue 488: RTX 5070 Ti Laptop (sm_120), CUDA 13.3, WSL2, no-op kernels "
                          "(https://github.com/ahrefs/ocannl/issues/488)")
PUBLISHED_CHAIN = (  # (N, N launches + sync us, graph + sync us, async enqueue us per launch)
    (8, 51.9, 19.4, 2.78), (16, 119.3, 25.6, 2.65), (24, 159.1, 28.7, 2.81),
    (36, 233.5, 37.9, 2.68), (64, 411.7, 49.1, 2.65), (117, 735.4, 82.9, 2.62))
VARIANTS = ("sync_each", "back_to_back", "graph", "fused")
VARIANT_LABELS = {"sync_each": "(a) synchronize after each", "back_to_back": "(b) back to back",
                  "graph": "(c) CUDA graph replay", "fused": "(d) fused into one kernel"}


def step_args(array: Any, elements: int) -> list:
    """One in-place step on ``array``: the kernel's out and in are the same buffer."""
    return [array, array, SCALE, BIAS, np.int32(elements)]


def fused_args(array: Any, steps: int, elements: int) -> list:
    return [array, array, SCALE, BIAS, np.int32(steps), np.int32(elements)]


def grid_for(elements: int) -> int:
    return (elements + BLOCK_THREADS - 1) // BLOCK_THREADS


def warm_step_seconds(gpu: Any, step: Any, blocks: int) -> float:
    """Duration of one in-place step over ``blocks`` blocks as it runs inside the chain: the launch
    before it has left the array in L2 (the first launch warms it, the second is timed)."""
    elements = blocks * BLOCK_THREADS
    array = gpu.to_device(np.ones(elements, np.float32))
    seconds = 0.0
    for _ in range(2):
        run = gpu.launch(step, grid=blocks, block=BLOCK_THREADS, args=step_args(array, elements))
        seconds = float(run.seconds)
    return seconds


def size_for_duration(gpu: Any, step: Any, target_s: float, max_doublings: int = 12) -> int:
    """Element count (whole blocks) whose warm ``step`` lasts closest to ``target_s``.

    The duration grows with the block count but not linearly (waves, the ramp-up of the memory
    pipeline), so the count is searched: doubling from one block until the kernel is at least
    ``target_s`` long, then bisection between the last two counts.
    """
    low_blocks, low_s = 0, 0.0
    high_blocks = 1
    high_s = warm_step_seconds(gpu, step, high_blocks)
    for _ in range(max_doublings):
        if high_s >= target_s:
            break
        low_blocks, low_s = high_blocks, high_s
        high_blocks *= 2
        high_s = warm_step_seconds(gpu, step, high_blocks)
    while high_blocks - low_blocks > 1 and high_s >= target_s:
        middle_blocks = (low_blocks + high_blocks) // 2
        middle_s = warm_step_seconds(gpu, step, middle_blocks)
        if middle_s >= target_s:
            high_blocks, high_s = middle_blocks, middle_s
        else:
            low_blocks, low_s = middle_blocks, middle_s
    best_blocks = high_blocks
    if low_blocks > 0 and abs(low_s - target_s) < abs(high_s - target_s):
        best_blocks = low_blocks
    return best_blocks * BLOCK_THREADS


def measure_chain(gpu: Any, step: Any, fused: Any, elements: int, kernels: int) -> dict:
    """Run the chain the four ways; per variant: window, cost per kernel, utilization, output.

    All variants work on one array, reset from the host between them while the GPU is idle; one
    warm-up launch before the first window puts the array in L2, as in a loop that runs many steps.
    """
    system = gpu.system
    timeline = system.timeline
    start_values = np.linspace(-1.0, 1.0, elements, dtype=np.float32)
    grid = grid_for(elements)
    array = gpu.to_device(start_values)
    results: dict = {}

    def launch_chain(stream: Any, synchronize_each: bool) -> None:
        for _ in range(kernels):
            stream.launch(step, grid, BLOCK_THREADS, step_args(array, elements))
            if synchronize_each:
                stream.synchronize()

    def record(variant: str, start_s: float) -> None:
        end_s = system.host_time_s
        util = timeline.utilization(start_s, end_s)
        spans = timeline.kernels(start_s, end_s)
        results[variant] = {
            "window_us": (end_s - start_s) * 1e6,
            "per_kernel_us": (end_s - start_s) * 1e6 / kernels,
            "kernel_us": float(np.mean([span.duration_s for span in spans])) * 1e6,
            "kernels_launched": len(spans),
            "gpu_idle_pct": 100.0 - util["gpu_utilization_pct"],
            "gpu_utilization_pct": util["gpu_utilization_pct"],
            "sm_issue_pct": util["sm_issue_pct"],
            "dram_throughput_pct": util["dram_throughput_pct"],
            "output": array.get(),
        }

    stream = gpu.stream()
    stream.launch(step, grid, BLOCK_THREADS, step_args(array, elements))  # warm-up: the array into L2
    stream.synchronize()
    for variant, synchronize_each in (("sync_each", True), ("back_to_back", False)):
        array.set(start_values)
        start_s = system.host_time_s
        launch_chain(stream, synchronize_each)
        if not synchronize_each:
            stream.synchronize()
        record(variant, start_s)

    array.set(start_values)
    graph = gpu.graph()
    with graph.capture(stream):
        launch_chain(stream, synchronize_each=False)
    instantiate_start_s = system.host_time_s
    graph.instantiate()
    instantiate_us = (system.host_time_s - instantiate_start_s) * 1e6
    start_s = system.host_time_s
    graph.replay(stream)
    stream.synchronize()
    record("graph", start_s)
    results["graph"]["instantiate_us"] = instantiate_us

    array.set(start_values)
    start_s = system.host_time_s
    stream.launch(fused, grid, BLOCK_THREADS, fused_args(array, kernels, elements))
    stream.synchronize()
    record("fused", start_s)
    return results


def model_per_kernel_us(config: Any, kernel_us: float, fused_kernel_us: float, kernels: int) -> dict:
    """The system model's arithmetic for each variant, per kernel, in microseconds (docs/system.md)."""
    launch_us = float(config.launch_cpu_us)
    sync_us = float(config.sync_cpu_us)
    latency_us = float(config.kernel_launch_latency_cycles) / float(config.core_clock_mhz)
    graph_gpu_us = float(config.graph_kernel_gpu_us)
    gpu_end_us = 0.0
    for index in range(kernels):
        gpu_end_us = max((index + 1) * launch_us, gpu_end_us) + latency_us + kernel_us
    return {
        "sync_each": launch_us + latency_us + kernel_us + sync_us,
        "back_to_back": (gpu_end_us + sync_us) / kernels,
        "graph": (float(config.graph_launch_cpu_us) + latency_us
                  + kernels * (graph_gpu_us + kernel_us) + sync_us) / kernels,
        "fused": (launch_us + latency_us + fused_kernel_us + sync_us) / kernels,
    }


def model_chain_us(config: Any, kernel_us: float, kernels: int) -> dict:
    """The system model's totals for ``kernels`` kernels of ``kernel_us`` and one synchronize, in microseconds:
    launched back to back (``streams``), replayed as a graph (``graph``), and the host's cost per launch
    (``enqueue``); per kernel these are ``model_per_kernel_us`` times ``kernels``."""
    per_kernel = model_per_kernel_us(config, kernel_us, kernel_us, kernels)
    return {"streams": per_kernel["back_to_back"] * kernels, "graph": per_kernel["graph"] * kernels,
            "enqueue": float(config.launch_cpu_us)}


def published_comparison(config: Any, noop_us: float) -> list[dict]:
    """The model against ``PUBLISHED_CHAIN`` (figures that set no parameter): one row per figure and N, with
    ``error_pct`` = 100 (model - published) / published."""
    rows = []
    for kernels, streams_us, graph_us, enqueue_us in PUBLISHED_CHAIN:
        model = model_chain_us(config, noop_us, kernels)
        for figure, published in (("streams", streams_us), ("graph", graph_us), ("enqueue", enqueue_us)):
            rows.append({"figure": figure, "kernels": kernels, "published_us": published,
                         "model_us": model[figure], "error_pct": 100.0 * (model[figure] - published) / published})
    return rows


def _comparison_table(rows: list[dict], noop_us: float, config_name: str) -> str:
    labels = {"streams": "N launches + sync", "graph": "graph replay + sync", "enqueue": "enqueue per launch"}
    table = format_table(["figure", "N", "published us", f"model us ({config_name})", "error %"],
                         [[labels[row["figure"]], row["kernels"], row["published_us"], row["model_us"],
                           row["error_pct"]] for row in rows])
    errors = np.abs([row["error_pct"] for row in rows])
    return (f"validation against figures that set no parameter ({PUBLISHED_CHAIN_SOURCE}; the no-op kernel "
            f"stood in for by one block of step, {noop_us:.2f} us):\n{table}\nmedian |error| "
            f"{float(np.median(errors)):.0f}%, worst {float(np.max(errors)):.0f}% (another GPU, driver and "
            f"host: a measure of how far the config's host costs carry, not a fit)")


def _plot(results: dict, plot_dir: Path, config_name: str) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    figure, (cost_axes, util_axes) = plt.subplots(1, 2, figsize=(11, 4))
    labels = [VARIANT_LABELS[variant].split(" ", 1)[1] for variant in VARIANTS]
    cost_axes.bar(labels, [results[variant]["per_kernel_us"] for variant in VARIANTS], color="tab:blue")
    cost_axes.set_ylabel("us per kernel")
    cost_axes.set_title(f"cost per kernel ({config_name})")
    positions = np.arange(len(VARIANTS))
    for offset, key, label in ((-0.25, "gpu_utilization_pct", "GPU utilization (nvidia-smi)"),
                               (0.0, "sm_issue_pct", "SM issue active"),
                               (0.25, "dram_throughput_pct", "DRAM throughput")):
        util_axes.bar(positions + offset, [results[variant][key] for variant in VARIANTS], width=0.25,
                      label=label)
    util_axes.set_xticks(positions, labels)
    util_axes.set_ylabel("% of window")
    util_axes.legend(fontsize=8)
    for axes in (cost_axes, util_axes):
        axes.tick_params(axis="x", labelrotation=20)
    figure.tight_layout()
    path = plot_dir / "overhead.png"
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return [path]


def run(config: Any = None, plot_dir: str | Path | None = None, progress: bool = True, *,
        kernels: int = NVIDIA_KERNELS_PER_STEP, target_kernel_us: float = NVIDIA_V100_US["kernel"],
        elements: int | None = None, overrides: dict | None = None) -> LabResult:
    """Run the lab on ``config`` (a config name or path; default v100).

    ``overrides`` are config fields for GPU(config, **overrides), DEFAULT_OVERRIDES when None (pass {} for
    the whole chip); fewer ``sms`` keep the per-kernel overheads (the kernel is still sized to
    ``target_kernel_us``) and make the simulation faster.
    """
    from gpusim.api.gpu import GPU

    config_name = DEFAULT_CONFIG if config is None else config
    gpu = GPU(config_name, **(DEFAULT_OVERRIDES if overrides is None else overrides))
    cfg = gpu.config
    module = gpu.load(str(PROGRAM))
    step, fused = module["step"], module["fused"]
    if elements is None:
        elements = size_for_duration(gpu, step, target_kernel_us * 1e-6)
    if progress:
        print(f"[overhead] {config_name}: {kernels} kernels of {elements} elements")
    results = measure_chain(gpu, step, fused, elements, kernels)
    noop_us = warm_step_seconds(gpu, step, 1) * 1e6

    reference = np.linspace(-1.0, 1.0, elements, dtype=np.float32)
    for _ in range(kernels):
        reference = reference * SCALE + BIAS
    outputs_match = all(np.array_equal(results[variant]["output"], results["sync_each"]["output"])
                        for variant in VARIANTS)
    reference_match = bool(np.allclose(results["fused"]["output"], reference, rtol=1e-5, atol=1e-6))
    kernel_us = results["back_to_back"]["kernel_us"]
    model = model_per_kernel_us(cfg, kernel_us, results["fused"]["kernel_us"], kernels)

    values: dict = {"config": str(config_name), "kernels": kernels, "elements": elements,
                    "kernel_us": kernel_us, "outputs_match": outputs_match,
                    "reference_match": reference_match,
                    "graph_instantiate_us": results["graph"]["instantiate_us"]}
    rows = []
    for variant in VARIANTS:
        measured = results[variant]
        for key in ("per_kernel_us", "gpu_idle_pct", "gpu_utilization_pct", "sm_issue_pct",
                    "dram_throughput_pct"):
            values[f"{variant}_{key}"] = measured[key]
        values[f"{variant}_model_us"] = model[variant]
        nvidia = NVIDIA_V100_US.get(variant) if str(config_name) == "v100" else None
        if nvidia is not None:
            values[f"{variant}_nvidia_v100_us"] = nvidia
            values[f"{variant}_vs_nvidia_pct"] = 100.0 * (measured["per_kernel_us"] - nvidia) / nvidia
        rows.append([VARIANT_LABELS[variant], measured["per_kernel_us"], model[variant],
                     "-" if nvidia is None else f"{nvidia:.1f}", measured["gpu_idle_pct"],
                     measured["gpu_utilization_pct"], measured["sm_issue_pct"],
                     measured["dram_throughput_pct"]])
    table = format_table(["variant", "us/kernel", "model us", "NVIDIA V100 us (calibration)", "GPU idle %",
                          "utilization %", "SM issue %", "DRAM %"], rows)
    table += (f"\n\none kernel: {kernel_us:.2f} us on the GPU ({elements} elements); graph instantiate "
              f"{results['graph']['instantiate_us']:.1f} us once; outputs equal across variants: "
              f"{outputs_match}")
    comparison = published_comparison(cfg, noop_us)
    values["noop_us"] = noop_us
    values["published_comparison"] = comparison
    values["published_median_abs_error_pct"] = float(np.median(np.abs([row["error_pct"] for row in comparison])))
    table += "\n\n" + _comparison_table(comparison, noop_us, str(config_name))

    back = values["back_to_back_per_kernel_us"]
    lesson = (
        f"A {kernel_us:.1f} us kernel costs {values['sync_each_per_kernel_us']:.1f} us when the host "
        f"synchronizes after each launch: the launch call, the GPU's launch latency and the synchronize's "
        f"wake-up are paid in series and the GPU sits idle {values['sync_each_gpu_idle_pct']:.0f}% of the "
        f"time. Back to back the host's launch calls hide under running kernels ({back:.1f} us per kernel); "
        f"a CUDA graph pays one host call for all {kernels} kernels and a smaller GPU-side cost per kernel "
        f"({values['graph_per_kernel_us']:.1f} us); fusing the chain removes the launches and all but one "
        f"pass over memory ({values['fused_per_kernel_us']:.2f} us per step). Note the utilization contrast: "
        f"back to back, nvidia-smi would report {values['back_to_back_gpu_utilization_pct']:.0f}% "
        f"utilization while the SMs issue {values['back_to_back_sm_issue_pct']:.0f}% of the time and DRAM "
        f"runs at {values['back_to_back_dram_throughput_pct']:.0f}% of peak: 'utilization' counts time with "
        f"any kernel resident, not work done."
    )
    figures: list[Path] = []
    if plot_dir is not None:
        out_dir = Path(plot_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        figures = _plot(results, out_dir, str(config_name))
        figures.append(gpu.timeline.to_chrome(out_dir / "overhead_timeline.json"))
    if progress:
        print(table)
    return LabResult(name=NAME, title=TITLE, table=table, lesson=lesson, values=values, figures=figures)
