"""The roofline per precision: tensor-core ceilings and ridge points derived here from the config fields, the
datasheet's 295 / 206 FLOP/B at NVIDIA's clock, and the ceilings the plot and the CLI show."""

import pytest

import gpusim
from gpusim.analytic.models import roofline, tensor_peaks
from gpusim.observe.plot import chip_ceilings

# The datasheet figures of ../shared/reference/gpu-specs.md: dense BF16 989.4 TFLOP/s (at 1830 MHz),
# 3.35 TB/s (H100 SXM) and 4.8 TB/s (H200)
DATASHEET_BF16 = 989.4e12
DATASHEET_CLOCK_MHZ = 1830.0


def _scale(config):
    return config.sms * config.core_clock_mhz * 1e6


@pytest.mark.parametrize("name", ["h100-sxm", "h200", "a100"])
def test_dense_peaks_and_ridges_follow_the_fields(name):
    config = gpusim.load_config(name)
    roofs = roofline(config)
    dram = config.dram_bandwidth_gbs * 1e9
    expected = {
        "tensor_fp16": config.tensor_flops_per_cycle_per_sm,
        "tensor_bf16": config.tensor_flops_per_cycle_per_sm,  # BF16 at the FP16 rate (sm_80+)
        "tensor_tf32": config.tensor_tf32_flops_per_cycle_per_sm,
        "tensor_int8": config.tensor_int8_ops_per_cycle_per_sm,
    }
    for precision, per_cycle in expected.items():
        assert roofs.peak_flops[precision] == pytest.approx(per_cycle * _scale(config))
        assert roofs.ridge_point(precision, "dram") == pytest.approx(per_cycle * _scale(config) / dram)
        assert roofs.ridge_point(precision, "dram_sustained") == pytest.approx(
            per_cycle * _scale(config) / (dram * config.dram_efficiency))
    assert roofs.ridge_point("tensor_bf16") > 10 * roofs.ridge_point("fp32")


@pytest.mark.parametrize("name", ["h100-sxm", "h200"])
def test_mma_sync_rate_is_flops_per_mma_over_the_pipe_interval(name):
    config = gpusim.load_config(name)
    roofs = roofline(config)
    per_sub_partition = 2 * 16 * 8 * 16 / config.mma_f16_m16n8k16_interval_cycles  # m16n8k16: 4096 FLOPs
    rate = per_sub_partition * config.sub_partitions_per_sm * _scale(config)
    assert roofs.peak_flops["mma_sync_bf16"] == pytest.approx(rate)
    assert roofs.peak_flops["mma_sync_fp16"] == pytest.approx(rate)
    int8 = 2 * 16 * 8 * 32 / config.mma_int8_m16n8k32_interval_cycles * config.sub_partitions_per_sm
    assert roofs.peak_flops["mma_sync_int8"] == pytest.approx(int8 * _scale(config))
    # H100 (and H200, the same SM): mma.sync reaches ~2/3 of the dense peak (gpu-specs: 67 % measured)
    assert roofs.peak_flops["mma_sync_bf16"] / roofs.peak_flops["tensor_bf16"] == pytest.approx(2 / 3, abs=0.01)
    assert roofs.ridge_point("mma_sync_bf16") < roofs.ridge_point("tensor_bf16")


def test_datasheet_ridges_at_nvidias_clock():
    h100 = roofline(gpusim.load_config("h100-sxm", core_clock_mhz=DATASHEET_CLOCK_MHZ))
    h200 = roofline(gpusim.load_config("h200", core_clock_mhz=DATASHEET_CLOCK_MHZ))
    assert h100.peak_flops["tensor_bf16"] == pytest.approx(DATASHEET_BF16, rel=0.001)
    assert h100.ridge_point("tensor_bf16") == pytest.approx(DATASHEET_BF16 / 3.35e12, rel=0.001)  # 295
    assert h200.ridge_point("tensor_bf16") == pytest.approx(DATASHEET_BF16 / 4.8e12, rel=0.001)  # 206


def test_chips_without_a_type_have_no_ceiling_for_it():
    v100 = tensor_peaks(gpusim.load_config("v100"))
    assert "tensor_bf16" not in v100 and not any(key.startswith("mma_sync") for key in v100)
    a100 = tensor_peaks(gpusim.load_config("a100"))
    assert "tensor_fp8" not in a100 and "mma_sync_fp8" not in a100 and "mma_sync_bf16" in a100


def test_plot_ceilings_show_fp32_and_tensor_side_by_side():
    config = gpusim.load_config("h100-sxm")
    compute, _ = chip_ceilings(config)
    roofs = roofline(config)
    assert compute["FP32"] == pytest.approx(roofs.peak_flops["fp32"])
    assert compute["tensor FP16"] == pytest.approx(roofs.peak_flops["tensor_bf16"])
    assert compute["tensor FP8"] == pytest.approx(roofs.peak_flops["tensor_fp8"])
    assert compute["mma.sync FP16/BF16"] == pytest.approx(roofs.peak_flops["mma_sync_bf16"])
    v100, _ = chip_ceilings(gpusim.load_config("v100"))
    assert "mma.sync FP16/BF16" not in v100 and "tensor FP8" not in v100


def test_cli_roofline_prints_the_ridge_of_every_ceiling(capsys):
    from gpusim.cli import main

    assert main(["roofline", "h200"]) == 0
    out = capsys.readouterr().out
    roofs = roofline(gpusim.load_config("h200"))
    assert f"mma.sync FP16/BF16 {roofs.ridge_point('mma_sync_bf16'):.0f}" in out
    assert f"tensor FP16 {roofs.ridge_point('tensor_bf16'):.0f}" in out


def test_tensor_metrics_of_an_int8_gemm():
    from gpusim.programs.catalog import run_program

    result = run_program("gemm_int8")
    assert result.ok
    run = result.runs[0]
    sizes = result.spec.sizes
    m, n, k = sizes["m"], sizes["n"], sizes["k"]
    metrics = run.metrics
    assert metrics["gpusim__tensor_flops_src_int8_dst_int32.sum"] == 2 * m * n * k  # 2 operations per MAC
    assert metrics["gpusim__tensor_flops_src_bf16_dst_fp32.sum"] == 0
    assert metrics["gpusim__flops.sum"] == 2 * m * n * k
    config = run.config
    issued = run.counters["pipe_tensor_issues"]
    assert issued == m * n * k // (16 * 8 * 32)  # one m16n8k32 per 16 x 8 x 32 block of the product
    busy = issued * config.mma_int8_m16n8k32_interval_cycles
    expected = 100 * busy / (run.counters["sm_active_cycles"] * config.sub_partitions_per_sm)
    assert metrics["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"] == pytest.approx(expected)
    assert run.roofline().precision == "mma_sync_int8"


def test_regime_counts_the_tensor_pipe():
    from gpusim.observe.regime import classify

    config = gpusim.load_config("h100-sxm")
    metrics = {"smsp__issue_active.avg.pct_of_peak_sustained_active": 30.0,
               "dram__throughput.avg.pct_of_peak_sustained_elapsed": 40.0,
               "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": 92.0}
    regime = classify(metrics, config)
    assert regime.kind == "compute-bound" and regime.limiter == "tensor pipe"
