"""Tests of the `llm-step` lab: the step's kernel structure and breakdown on a fake GPU, the 70B arithmetic,
and the full lab on the real h100-sxm config."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from gpusim.api.gpu import GPU
from gpusim.labs import llm_step
from gpusim.observe.regime import MEMORY_BOUND_PCT
from gpusim.observe.report import verdict
from tests.test_system import FakeGPU, FakeKernel

US = 1e-6


def fake_module(memory_s: float, compute_s: float) -> dict:
    """Kernels that do nothing functionally: gemv looks memory-bound, the rest compute-bound."""
    module = {}
    for name in ("rmsnorm", "gemv", "attention", "add", "silu"):
        memory_bound = name == "gemv"
        module[name] = FakeKernel(name, memory_s if memory_bound else compute_s, lambda args: None,
                                  issue_pct=10.0 if memory_bound else 60.0,
                                  dram_pct=80.0 if memory_bound else 5.0)
    return module



@pytest.mark.parametrize("fused", [False, True])
def test_decode_step_kernel_structure_and_breakdown(fused):
    gpu = FakeGPU()
    cfg = gpu.config
    shape = llm_step.ModelShape(layers=3, model_dim=64, heads=2, ffn_dim=128, context=16)
    weights = llm_step.make_weights(shape)
    caches = llm_step.make_caches(shape, batch=2)
    memory_s, compute_s = 1.5 * US, 0.5 * US
    step = llm_step.DecodeStep(gpu, fake_module(memory_s, compute_s), shape, 2, weights, caches)
    stream = gpu.stream()
    start_s = gpu.system.host_time_s
    step.issue(stream, fused)
    stream.synchronize()
    result = llm_step.breakdown(gpu.timeline, start_s, gpu.system.host_time_s, cfg)
    per_layer = shape.kernels_per_layer(fused)
    assert result["kernels"] == shape.layers * per_layer
    gemvs_per_layer = 4
    others_per_layer = per_layer - gemvs_per_layer
    regimes = result["by_regime_us"]
    assert regimes["memory"] == pytest.approx(shape.layers * gemvs_per_layer * memory_s / US)
    assert regimes["compute"] == pytest.approx(shape.layers * others_per_layer * compute_s / US)
    assert regimes["latency"] == regimes["launch"] == 0.0  # no kernel is below both thresholds
    assert sum(regimes.values()) == pytest.approx(result["step_us"])
    kernels = shape.layers * per_layer
    latency_s = cfg.kernel_launch_latency_cycles / (cfg.core_clock_mhz * 1e6)
    # every kernel here is shorter than a host launch call: the step is host-bound
    assert max(memory_s, compute_s) + latency_s < cfg.launch_cpu_us * US
    last_kernel_s = memory_s if fused else compute_s  # unfused steps end with an add
    expected_step_s = kernels * cfg.launch_cpu_us * US + latency_s + last_kernel_s + cfg.sync_cpu_us * US
    assert result["step_us"] == pytest.approx(expected_step_s / US)


def test_reference_step_keeps_activations_finite_and_fused_shape_counts():
    shape = llm_step.ModelShape(layers=2, model_dim=64, heads=2, ffn_dim=128, context=8)
    weights = llm_step.make_weights(shape)
    caches = llm_step.make_caches(shape, batch=3)
    x = np.random.default_rng(0).standard_normal((3, shape.model_dim)).astype(np.float32)
    out = llm_step.reference_step(shape, weights, caches, x)
    assert out.shape == x.shape and np.all(np.isfinite(out))
    assert shape.kernels_per_layer(False) - shape.kernels_per_layer(True) == 3  # silu + two adds folded


def test_big_model_extrapolation_arithmetic():
    gpu = FakeGPU()
    cfg = gpu.config
    probe = {"achieved_Bps": 3.0e12, "peak_Bps": 3.35e12}
    eager = llm_step.extrapolate_big_model(cfg, probe, kernels_per_layer=10, graph=False)
    graph = llm_step.extrapolate_big_model(cfg, probe, kernels_per_layer=7, graph=True)
    weight_bytes = llm_step.BIG_MODEL_PARAMS * llm_step.BIG_MODEL_BYTES_PER_PARAM
    latency_s = cfg.kernel_launch_latency_cycles / (cfg.core_clock_mhz * 1e6)
    expected_eager_s = weight_bytes / 3.0e12 + llm_step.BIG_MODEL_LAYERS * 10 * latency_s
    expected_graph_s = weight_bytes / 3.0e12 + llm_step.BIG_MODEL_LAYERS * 7 * cfg.graph_kernel_gpu_us * US
    assert eager["step_ms"] == pytest.approx(expected_eager_s * 1e3)
    assert graph["step_ms"] == pytest.approx(expected_graph_s * 1e3)
    assert eager["bound_ms"] == pytest.approx(weight_bytes / 3.35e12 * 1e3)


def test_llm_step_lab_on_h100(tmp_path):
    shape = llm_step.ModelShape(layers=2, model_dim=128, heads=2, ffn_dim=256, context=32)
    result = llm_step.run("h100-sxm", plot_dir=tmp_path, progress=False, batches=(1, 8), shape=shape,
                          probe_k_dim=256)
    values = result.values
    for batch in (1, 8):
        assert values[f"b{batch}_outputs_match"]
        for variant, _, _ in llm_step.VARIANTS:
            assert values[f"b{batch}_{variant}_reference_match"], (batch, variant)
        assert values[f"b{batch}_graph_gain"] > 1.0
        assert values[f"b{batch}_fusion_gain"] > 1.0
        assert values[f"b{batch}_graph_fusion_gain"] > max(values[f"b{batch}_graph_gain"],
                                                           values[f"b{batch}_fusion_gain"])
        assert values[f"b{batch}_eager_kernels"] == 2 * 10
        assert values[f"b{batch}_fused_kernels"] == 2 * 7
        # every variant runs warm (after the untimed warm-up step): the graph changes the overhead,
        # not the kernels' own time
        eager_kernels_us = sum(values[f"b{batch}_eager_{regime}_us"] for regime in llm_step.REGIMES)
        graph_kernels_us = sum(values[f"b{batch}_graph_{regime}_us"] for regime in llm_step.REGIMES)
        assert graph_kernels_us == pytest.approx(eager_kernels_us, rel=0.02)
    # the tiny model at batch 1 is overhead-bound
    assert values["b1_eager_overhead_us"] > 0.5 * values["b1_eager_step_us"]
    # 70B: memory time dominates, and the estimate cannot beat the bandwidth bound
    assert values["big_memory_ms"] > 10 * values["big_overhead_ms"]
    assert values["big_step_ms"] >= values["big_bound_ms"]
    assert values["big_memory_ms"] == pytest.approx(
        values["big_weight_gb"] * 1e9 / (values["probe_achieved_gbs"] * 1e9) * 1e3)
    plots = ["llm_step.png"] if importlib.util.find_spec("matplotlib") else []
    assert sorted(path.name for path in result.figures) == sorted([*plots, "llm_step_timeline.json"])
    assert all(path.is_file() and path.parent == tmp_path for path in result.figures)


def test_batch1_gemv_is_memory_bound_by_its_own_verdict():
    """The batch-1 GEMV of a model too big for L2 (the lab's probe: 4 column tiles per SM, weights
    streamed from DRAM once) is memory-bound by the report's verdict -- the decode lab's lesson -- as the
    code-generation stage schedules it and as the PTX is written."""
    for codegen in ("ptxas", "none"):
        _probe_is_memory_bound(GPU("h100-sxm", sms=llm_step.PROBE_SMS, codegen=codegen))


def _probe_is_memory_bound(gpu):
    module = gpu.load(str(llm_step.PROGRAM))
    k_dim = 2048  # 8 MB of fp16 weights: more than the 16-SM slice's L2
    probe = llm_step.probe_weight_bandwidth(gpu, module, k_dim)
    weight_bytes = k_dim * llm_step.PROBE_TILES_PER_SM * llm_step.GEMV_COLUMNS * gpu.config.sms * 2
    assert probe["weight_bytes"] == weight_bytes and weight_bytes > gpu.config.l2_bytes
    assert probe["dram_pct"] >= MEMORY_BOUND_PCT
    assert probe["verdict"] == "memory-bound"


def test_breakdown_regimes_are_the_report_verdicts_of_the_kernels():
    """Every kernel span of a real decode step gets the family of verdict(run) of its own Run."""
    gpu = GPU("h100-sxm", sms=8)
    module = gpu.load(str(llm_step.PROGRAM))
    shape = llm_step.ModelShape(layers=1, model_dim=128, heads=2, ffn_dim=256, context=16)
    step = llm_step.DecodeStep(gpu, module, shape, 1, llm_step.make_weights(shape),
                               llm_step.make_caches(shape, batch=1))
    stream = gpu.stream()
    start_s = gpu.system.host_time_s
    step.issue(stream, fused=False)
    stream.synchronize()
    spans = gpu.timeline.kernels(start_s, gpu.system.host_time_s)
    runs = gpu.system.runs[-len(spans):]
    assert [span.name for span in spans] == [run.program.name for run in runs]
    families = [verdict(run).family for run in runs]
    assert [llm_step.kernel_regime(span.args, gpu.config) for span in spans] == families
    result = llm_step.breakdown(gpu.timeline, start_s, gpu.system.host_time_s, gpu.config)
    for regime in llm_step.REGIMES:
        expected = sum(span.duration_s * 1e6 for span, family in zip(spans, families, strict=True)
                       if family == regime)
        assert result["by_regime_us"][regime] == pytest.approx(expected)
