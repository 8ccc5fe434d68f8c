"""Analytical performance models of a GPUConfig, to put beside what the simulator measures.

What it models:

* **Roofline** (Williams, Waterman & Patterson, 2009): compute peaks per precision and pipe (FP32 and FP64
  FMA lanes x 2 FLOPs x SMs x clock; the dense tensor-core peaks per input type, FP16/BF16, TF32, FP8,
  INT8, from the config's FLOP/cycle/SM fields; and the rate ``mma.sync`` can attain, FLOPs per mma x
  sub-partitions / the config's pipe interval per mma, which on H100 is ~67 % of the dense peak: the rest
  needs ``wgmma``), bandwidth ceilings per memory level (DRAM at peak and at its sustained efficiency, L2,
  L1/shared summed over SMs), ridge points (peak / bandwidth), and ``roofline_point(run)``: a run's
  arithmetic intensity against DRAM bytes, achieved and attainable FLOP/s, which roof binds and the
  percentage of that roof reached.
* **Little's law** for latency hiding: bytes in flight = bandwidth x latency, per SM and per chip, the warps
  needed to keep that many bytes in flight, and the throughput predicted at a given number of warps:
  min(bandwidth, warps x bytes per warp / latency). The same law for the ALU: warps needed to cover a
  dependent-instruction latency.
* **Occupancy**: re-exported from ``gpusim.arch.occupancy`` (the CUDA rules), so the analytic side has all its
  models in one place.
* **MWP-CWP** (Hong & Kim, ISCA 2009) lives in ``gpusim.analytic.mwp``; ``mwp_cwp`` is re-exported here.

What it simplifies: one clock domain (the config's); the DRAM latency is the unloaded latency (queueing
is what the simulator adds); FP16 non-tensor and integer CUDA-core peaks are not modelled as roofs; BF16
tensor cores exist from compute capability 8.0 and run at the FP16 rate (the configs have one field for
both); INT8 "FLOPs" are integer multiply-add operations counted the same way (2 per MAC). A run's
arithmetic intensity counts the FLOPs the engine attributes to FADD/FMUL/FFMA (and FP64/FP16 forms, and
tensor-core FLOPs) over the bytes that reached DRAM, exactly as ``gpusim__arithmetic_intensity``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.analytic.mwp import MWPCWPPrediction, mwp_cwp
from gpusim.arch.config import WARP_SIZE, GPUConfig
from gpusim.arch.occupancy import Occupancy, occupancy

__all__ = [
    "LEVELS", "PRECISIONS", "TENSOR_DENSE_FIELDS", "MMA_SYNC_SHAPES", "tensor_peaks", "Roofline",
    "RooflinePoint", "roofline", "roofline_point",
    "LatencyHiding", "latency_hiding", "bytes_in_flight_needed", "warps_needed_for_bandwidth",
    "throughput_at_warps", "warps_needed_for_alu", "Occupancy", "occupancy", "MWPCWPPrediction", "mwp_cwp",
]

TENSOR_DENSE_FIELDS = {
    "tensor_fp16": "tensor_flops_per_cycle_per_sm",
    "tensor_bf16": "tensor_flops_per_cycle_per_sm",
    "tensor_tf32": "tensor_tf32_flops_per_cycle_per_sm",
    "tensor_fp8": "tensor_fp8_flops_per_cycle_per_sm",
    "tensor_int8": "tensor_int8_ops_per_cycle_per_sm",
}
"""Dense tensor-core peak per input type -> its FLOP/cycle/SM config field."""
MMA_SYNC_SHAPES = {
    "mma_sync_fp16": ("mma_f16_m16n8k16_interval_cycles", 2 * 16 * 8 * 16),
    "mma_sync_bf16": ("mma_f16_m16n8k16_interval_cycles", 2 * 16 * 8 * 16),
    "mma_sync_tf32": ("mma_tf32_m16n8k8_interval_cycles", 2 * 16 * 8 * 8),
    "mma_sync_fp8": ("mma_fp8_m16n8k32_interval_cycles", 2 * 16 * 8 * 32),
    "mma_sync_int8": ("mma_int8_m16n8k32_interval_cycles", 2 * 16 * 8 * 32),
}
"""The rate mma.sync attains per input type: (the config's tensor-pipe interval per mma of the type's
largest shape, that mma's FLOPs = 2 m n k)."""
BF16_MIN_CC = 8
"""BF16 (and its mma.sync) exist from sm_80 (PTX ISA: .bf16 needs sm_80)."""
PRECISIONS = ("fp32", "fp64", *TENSOR_DENSE_FIELDS, *MMA_SYNC_SHAPES)
"""Compute roofs, each a pipe's peak FLOP/s; ``Roofline.peak_flops`` holds the ones the config has
(fp32, fp64 and tensor_fp16 always)."""

LEVELS = ("dram", "dram_sustained", "l2", "l1")
"""Bandwidth ceilings: DRAM at peak, DRAM at the config's sustained efficiency, L2, L1/shared."""


@dataclass(frozen=True)
class Roofline:
    """Roofs of one config: peak FLOP/s per precision and bandwidth (B/s) per memory level."""

    config_name: str
    peak_flops: dict
    """{precision: FLOP/s}"""
    bandwidth_bytes_per_s: dict
    """{level: bytes/s}"""

    def ridge_point(self, precision: str = "fp32", level: str = "dram") -> float:
        """Arithmetic intensity (FLOP/byte) where the bandwidth roof meets the compute roof."""
        return self.peak_flops[precision] / self.bandwidth_bytes_per_s[level]

    def attainable(self, intensity_flop_per_byte: float, precision: str = "fp32",
                   level: str = "dram") -> float:
        """min(peak, intensity x bandwidth): the roofline's attainable FLOP/s at an intensity."""
        return min(self.peak_flops[precision], intensity_flop_per_byte * self.bandwidth_bytes_per_s[level])

    def bound(self, intensity_flop_per_byte: float, precision: str = "fp32", level: str = "dram") -> str:
        """'memory' left of the ridge point, 'compute' at or right of it."""
        return "memory" if intensity_flop_per_byte < self.ridge_point(precision, level) else "compute"

    def table(self) -> str:
        """Each compute peak with its ridge against DRAM (peak and sustained), then each bandwidth."""
        lines = [f"roofline of {self.config_name}",
                 f"  {'peak':17s} {'TFLOP/s':>10s}   {'ridge vs DRAM':>13s} {'vs sustained':>12s} (FLOP/B)"]
        for precision, flops in self.peak_flops.items():
            lines.append(f"  {precision:17s} {flops / 1e12:10.3f}   {self.ridge_point(precision, 'dram'):13.1f} "
                         f"{self.ridge_point(precision, 'dram_sustained'):12.1f}")
        for level, bandwidth in self.bandwidth_bytes_per_s.items():
            ridge = self.ridge_point("fp32", level)
            lines.append(f"  {level:17s} {bandwidth / 1e9:10.1f} GB/s   fp32 ridge {ridge:8.2f} FLOP/B")
        return "\n".join(lines)


def tensor_peaks(config: GPUConfig) -> dict[str, float]:
    """{precision: FLOP/s} of the tensor cores: dense peaks and the mma.sync rates the config has (> 0)."""
    scale = config.sms * config.clock_hz
    has_bf16 = config.cc_major >= BF16_MIN_CC
    out = {}
    for precision, field_name in TENSOR_DENSE_FIELDS.items():
        if precision != "tensor_bf16" or has_bf16:
            out[precision] = float(getattr(config, field_name)) * scale
    for precision, (field_name, flops_per_mma) in MMA_SYNC_SHAPES.items():
        interval = int(getattr(config, field_name))
        if interval > 0 and (precision != "mma_sync_bf16" or has_bf16):
            out[precision] = flops_per_mma * config.sub_partitions_per_sm / interval * scale
    return {precision: flops for precision, flops in out.items() if flops > 0}


def roofline(config: GPUConfig) -> Roofline:
    """The roofs of ``config`` (a slice's roofs when ``sms`` < ``chip_sms``)."""
    dram_peak = config.dram_bandwidth_gbs * 1e9
    return Roofline(
        config_name=config.name,
        peak_flops={"fp32": config.peak_fp32_flops, "fp64": config.peak_fp64_flops,
                    "tensor_fp16": config.peak_tensor_flops, **tensor_peaks(config)},
        bandwidth_bytes_per_s={
            "dram": dram_peak,
            "dram_sustained": dram_peak * config.dram_efficiency,
            "l2": config.l2_bytes_per_cycle * config.clock_hz,
            "l1": config.l1_bytes_per_cycle_per_sm * config.sms * config.clock_hz,
        },
    )


@dataclass(frozen=True)
class RooflinePoint:
    """Where one run sits on its config's roofline (FP32 + FP64 + FP16 + tensor FLOPs against DRAM bytes), under
    the ceiling of its dominant precision (a tensor-core run: the rate mma.sync attains for its input class)."""

    arithmetic_intensity: float
    """FLOP per DRAM byte"""
    achieved_flops: float
    """FLOP/s"""
    attainable_flops: float
    """min(peak, intensity x sustained DRAM bandwidth), FLOP/s"""
    bound: str
    """'memory' or 'compute' by the side of the ridge point the intensity falls on"""
    pct_of_roof: float
    """achieved / attainable x 100"""
    precision: str
    level: str


TENSOR_FLOP_METRICS = {
    "mma_sync_fp16": ("gpusim__tensor_flops_src_fp16_dst_fp32.sum", "gpusim__tensor_flops_src_fp16_dst_fp16.sum"),
    "mma_sync_bf16": ("gpusim__tensor_flops_src_bf16_dst_fp32.sum",),
    "mma_sync_tf32": ("gpusim__tensor_flops_src_tf32_dst_fp32.sum",),
    "mma_sync_int8": ("gpusim__tensor_flops_src_int8_dst_int32.sum",),
    "mma_sync_fp8": ("gpusim__tensor_flops_src_fp8_dst_fp32.sum", "gpusim__tensor_flops_src_fp8_dst_fp16.sum"),
}
"""The ceiling of a run whose FLOPs are mostly tensor-core FLOPs of one class: the rate mma.sync attains."""


def _dominant_precision(metrics: dict, peaks: dict) -> str:
    """The ceiling of the precision with the most FLOPs: fp32, fp64, or the mma.sync rate of a tensor class."""
    candidates = {"fp32": metrics.get("gpusim__fp32_flops.sum", 0), "fp64": metrics.get("gpusim__fp64_flops.sum", 0)}
    candidates.update({precision: sum(metrics.get(name, 0) for name in names)
                       for precision, names in TENSOR_FLOP_METRICS.items() if precision in peaks})
    best = max(candidates, key=lambda precision: (candidates[precision], precision == "fp32"))
    return best if candidates[best] > 0 else "fp32"


def roofline_point(run, level: str = "dram_sustained") -> RooflinePoint:
    """A timed run's position on the roofline of its config (``run.roofline()`` in the Run API)."""
    if not run.timing:
        raise ValueError("roofline_point needs a timed run (launch with timing=True)")
    metrics = run.metrics
    roofs = roofline(run.config)
    precision = _dominant_precision(metrics, roofs.peak_flops)
    intensity = float(metrics["gpusim__arithmetic_intensity"])
    achieved = float(metrics["gpusim__flop_per_second"])
    dram_bytes = metrics["dram__bytes_read.sum"] + metrics["dram__bytes_write.sum"]
    if dram_bytes == 0:
        intensity = float("inf") if achieved > 0 else 0.0
    attainable = roofs.attainable(intensity, precision, level) if intensity != float("inf") \
        else roofs.peak_flops[precision]
    bound = roofs.bound(intensity, precision, level)
    return RooflinePoint(arithmetic_intensity=intensity, achieved_flops=achieved,
                         attainable_flops=attainable, bound=bound,
                         pct_of_roof=100.0 * achieved / attainable if attainable else 0.0,
                         precision=precision, level=level)


# ----------------------------------------------------------------------------- Little's law


def _level_rate_and_latency(config: GPUConfig, level: str) -> tuple[float, float]:
    """(bytes per cycle per SM sustained, load-to-use latency in cycles) of a memory level."""
    if level == "dram":
        rate = config.dram_bytes_per_cycle * config.dram_efficiency / config.sms
        return rate, float(config.dram_latency_cycles)
    if level == "l2":
        rate = min(config.l2_bytes_per_cycle / config.sms, config.interconnect_bytes_per_cycle_per_sm)
        return rate, float(config.l2_latency_cycles)
    if level == "l1":
        return config.l1_bytes_per_cycle_per_sm, float(config.l1_latency_cycles)
    if level == "shared":
        return config.shared_bytes_per_cycle_per_sm, float(config.shared_latency_cycles)
    raise ValueError(f"unknown memory level {level!r}; levels: dram, l2, l1, shared")


def bytes_in_flight_needed(config: GPUConfig, level: str = "dram") -> float:
    """Little's law: bytes one SM must have in flight to saturate its share of ``level``."""
    rate, latency = _level_rate_and_latency(config, level)
    return rate * latency


def warps_needed_for_bandwidth(config: GPUConfig, bytes_in_flight_per_warp: float,
                               level: str = "dram") -> float:
    """Resident warps per SM that saturate ``level`` when each keeps ``bytes_in_flight_per_warp``."""
    return bytes_in_flight_needed(config, level) / bytes_in_flight_per_warp


def throughput_at_warps(config: GPUConfig, warps_per_sm: float, bytes_in_flight_per_warp: float,
                        level: str = "dram") -> float:
    """Predicted bytes/s of the whole config: min(sustained bandwidth, warps x bytes / latency)."""
    rate, latency = _level_rate_and_latency(config, level)
    per_sm_bytes_per_cycle = min(rate, warps_per_sm * bytes_in_flight_per_warp / latency)
    return per_sm_bytes_per_cycle * config.sms * config.clock_hz


def warps_needed_for_alu(config: GPUConfig, dependent_latency_cycles: float | None = None,
                         independent_instructions: int = 1) -> float:
    """Warps per SM to keep every scheduler issuing when each warp has ``independent_instructions``
    ready per ``dependent_latency_cycles`` (default: the FP32 latency): latency x issue rate / ILP."""
    latency = float(config.fp32_latency_cycles if dependent_latency_cycles is None
                    else dependent_latency_cycles)
    return config.sub_partitions_per_sm * latency / independent_instructions


@dataclass(frozen=True)
class LatencyHiding:
    """Little's-law figures of one memory level for one access pattern (bytes per warp in flight)."""

    level: str
    latency_cycles: float
    bytes_per_cycle_per_sm: float
    bytes_in_flight_per_sm: float
    bytes_in_flight_per_warp: float
    warps_per_sm_to_saturate: float
    saturated_bytes_per_s: float

    def throughput(self, warps_per_sm: float, sms: int, clock_hz: float) -> float:
        """Predicted bytes/s at ``warps_per_sm`` resident warps."""
        per_sm = min(self.bytes_per_cycle_per_sm,
                     warps_per_sm * self.bytes_in_flight_per_warp / self.latency_cycles)
        return per_sm * sms * clock_hz


def latency_hiding(config: GPUConfig, bytes_in_flight_per_warp: float = 4.0 * WARP_SIZE,
                   level: str = "dram") -> LatencyHiding:
    """Little's law for ``level``: what it takes to saturate it with warps that each keep
    ``bytes_in_flight_per_warp`` outstanding (default: one coalesced 4-byte load per thread)."""
    rate, latency = _level_rate_and_latency(config, level)
    return LatencyHiding(level=level, latency_cycles=latency, bytes_per_cycle_per_sm=rate,
                         bytes_in_flight_per_sm=rate * latency,
                         bytes_in_flight_per_warp=bytes_in_flight_per_warp,
                         warps_per_sm_to_saturate=rate * latency / bytes_in_flight_per_warp,
                         saturated_bytes_per_s=rate * config.sms * config.clock_hz)


@dataclass(frozen=True)
class LittlesLawKnee:
    """Where throughput stops growing with resident warps, with each request's transfer time counted.

    A warp's request is in flight for the level's latency *plus* the time the SM's share of bandwidth takes
    to deliver the warp's own bytes (``transfer_cycles = bytes_in_flight_per_warp / bytes_per_cycle_per_sm``).
    Little's law (bytes in flight = rate x time in flight) then puts the knee at
    ``warps = rate x (latency + transfer) / bytes_per_warp``, which is the bare-latency figure
    (``LatencyHiding.warps_per_sm_to_saturate``) plus exactly one warp."""

    transfer_cycles: float
    in_flight_cycles: float
    warps: float

    def bytes_per_cycle_per_sm(self, model: LatencyHiding, warps_per_sm: float) -> float:
        """Predicted bytes per cycle per SM at ``warps_per_sm``: min(rate, warps x bytes / time in flight)."""
        return min(model.bytes_per_cycle_per_sm,
                   warps_per_sm * model.bytes_in_flight_per_warp / self.in_flight_cycles)


def littles_law_knee(model: LatencyHiding) -> LittlesLawKnee:
    """The corrected knee of ``model`` (see ``LittlesLawKnee``), as the latency-hiding and occupancy labs use it."""
    transfer = model.bytes_in_flight_per_warp / model.bytes_per_cycle_per_sm
    in_flight = model.latency_cycles + transfer
    return LittlesLawKnee(transfer_cycles=transfer, in_flight_cycles=in_flight,
                          warps=model.bytes_per_cycle_per_sm * in_flight / model.bytes_in_flight_per_warp)
