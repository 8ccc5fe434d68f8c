"""Analytical models beside the simulator: roofline, Little's law, occupancy (``models``), MWP-CWP
(``mwp``), and model-vs-simulation tables (``compare``). The models' names are re-exported here, so
``gpusim.analytic.roofline(config)`` works as before."""

from gpusim.analytic.models import (
    LEVELS,
    PRECISIONS,
    LatencyHiding,
    LittlesLawKnee,
    MWPCWPPrediction,
    Occupancy,
    Roofline,
    RooflinePoint,
    bytes_in_flight_needed,
    latency_hiding,
    littles_law_knee,
    mwp_cwp,
    occupancy,
    roofline,
    roofline_point,
    tensor_peaks,
    throughput_at_warps,
    warps_needed_for_alu,
    warps_needed_for_bandwidth,
)

__all__ = [
    "LEVELS", "PRECISIONS", "Roofline", "RooflinePoint", "roofline", "roofline_point", "tensor_peaks",
    "LatencyHiding", "latency_hiding", "LittlesLawKnee", "littles_law_knee", "bytes_in_flight_needed",
    "warps_needed_for_bandwidth",
    "throughput_at_warps", "warps_needed_for_alu", "Occupancy", "occupancy", "MWPCWPPrediction", "mwp_cwp",
]
