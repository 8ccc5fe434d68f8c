"""Metrics of a Run under Nsight Compute's names, each a formula over the engine's
counters and the config (docs/metrics.md lists every one with its formula).

Instruction metrics exist for functional and timed runs; time, throughput,
memory and stall metrics for timed runs only. Metrics that Nsight does not
have (achieved FLOP/s, arithmetic intensity) are under the ``gpusim__`` prefix.
"""

from __future__ import annotations

import numpy as np

from gpusim.arch import codes as c
from gpusim.arch import isa as I
from gpusim.arch import layout as L

FLOP_METRICS = {
    I.FLOP_FADD: "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    I.FLOP_FMUL: "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    I.FLOP_FFMA: "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    I.FLOP_DADD: "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
    I.FLOP_DMUL: "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    I.FLOP_DFMA: "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
    I.FLOP_HADD: "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
    I.FLOP_HMUL: "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
    I.FLOP_HFMA: "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
}
PIPE_METRICS = {
    "fma": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "alu": "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
    "fp64": "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
    "sfu": "sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_active",
    "tensor": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",  # tensor cores (issue 14)
}
"""Math pipe -> its busy-cycles metric: issues x cycles per warp-instruction / (A x P) (Nsight calls the
SFU the XU). The tensor pipe's busy cycles are each form's own interval (tensor_counts), set with the
tensor metrics; it is listed here so the regime and the report count it as a math pipe: 100 % is the rate
mma.sync attains."""


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator) / float(denominator) if denominator else 0.0


def flop_counts(program, pc_counts: np.ndarray) -> dict[int, int]:
    """Predicated-on thread instructions per FLOP kind."""
    kinds = np.array([I.FORMS[f].flop_kind for f in program.code[:, L.F_ISA]], dtype=np.int64) \
        if program.n_inst else np.zeros(0, np.int64)
    out = {}
    for kind in FLOP_METRICS:
        out[kind] = int(pc_counts[: program.n_inst, 2][kinds == kind].sum()) if program.n_inst else 0
    return out


def pipe_mix(program, pc_counts: np.ndarray, config=None) -> dict[str, int]:
    """Warp-instructions per pipe (on ``config``, for the forms whose pipe depends on the GPU)."""
    pipes = np.array([I.form_pipe(I.FORMS[f], config) for f in program.code[:, L.F_ISA]], dtype=np.int64) \
        if program.n_inst else np.zeros(0, np.int64)
    return {name: int(pc_counts[: program.n_inst, 0][pipes == p].sum()) for p, name in enumerate(I.PIPE_NAMES)}


TENSOR_SOURCE_NAMES = {c.T_F16: "fp16", c.T_BF16: "bf16", c.T_TF32: "tf32", c.T_S8: "int8", c.T_U8: "int8",
                       c.T_E4M3: "fp8", c.T_E5M2: "fp8"}
TENSOR_DEST_NAMES = {c.T_F32: "fp32", c.T_F16: "fp16", c.T_S32: "int32"}
TENSOR_FLOP_METRICS = tuple(f"gpusim__tensor_flops_src_{s}_dst_{d}.sum" for s, d in (
    ("fp16", "fp32"), ("fp16", "fp16"), ("bf16", "fp32"), ("tf32", "fp32"), ("int8", "int32"), ("fp8", "fp32"),
    ("fp8", "fp16")))
"""FLOPs (2 per multiply-add; integer ops for int8) of mma/wmma per input and accumulator type (issue 14)."""


def tensor_counts(program, pc_counts: np.ndarray, config) -> dict[str, float]:
    """Tensor-core metrics from the executed instructions (issue 14): SASS-level HMMA/IMMA instructions (a
    wmma.mma counts as the HMMAs it is priced as), FLOPs per source/destination type, and the tensor pipe's
    busy cycles (warp-instructions x the form's interval from the config)."""
    out: dict[str, float] = {name: 0 for name in TENSOR_FLOP_METRICS}
    out.update({"sm__inst_executed_pipe_tensor_op_hmma.sum": 0, "sm__inst_executed_pipe_tensor_op_imma.sum": 0,
                "sm__inst_executed_pipe_tensor_op_gmma.sum": 0,
                "gpusim__tensor_flops.sum": 0, "gpusim__tensor_hmma_busy_cycles": 0,
                "gpusim__tensor_imma_busy_cycles": 0})
    if not program.n_inst:
        return out
    code = program.code
    tensor_pcs = [pc for pc in range(program.n_inst) if I.FORMS[int(code[pc, L.F_ISA])].pipe == I.PIPE_TENSOR]
    for pc in tensor_pcs:
        form = I.FORMS[int(code[pc, L.F_ISA])]
        executed = int(pc_counts[pc, 2]) // 32          # .aligned: a warp-instruction runs all 32 lanes
        source = TENSOR_SOURCE_NAMES.get(int(code[pc, L.F_TY2]), "fp16")
        dest = TENSOR_DEST_NAMES.get(int(code[pc, L.F_TY]), "fp32")
        flops = executed * form.tensor_flops
        out[f"gpusim__tensor_flops_src_{source}_dst_{dest}.sum"] += flops
        out["gpusim__tensor_flops.sum"] += flops
        integer = source == "int8"
        if form.op == c.OP_WGMMA:       # one HGMMA/IGMMA per warp, whatever its N (Nsight: ..._gmma)
            out["sm__inst_executed_pipe_tensor_op_gmma.sum"] += executed
        else:
            out[f"sm__inst_executed_pipe_tensor_op_{'imma' if integer else 'hmma'}.sum"] += executed * form.hmma_count
        busy = int(pc_counts[pc, 0]) * I.form_interval(form, config, 1)
        out[f"gpusim__tensor_{'imma' if integer else 'hmma'}_busy_cycles"] += busy
    return out


def derive_metrics(run) -> dict:
    config = run.config
    program = run.program
    counts = run.pc_counts
    warp_inst = int(counts[:, 0].sum())
    thread_inst = int(counts[:, 1].sum())
    m: dict[str, float] = {
        "smsp__inst_executed.sum": warp_inst,
        "smsp__thread_inst_executed.sum": thread_inst,
        "smsp__thread_inst_executed_pred_on.sum": int(counts[:, 2].sum()),
        "smsp__thread_inst_executed_per_inst_executed.ratio": _ratio(thread_inst, warp_inst),
        "sm__maximum_warps_per_active_cycle_pct": 100.0 * run.occupancy.occupancy,
        "launch__grid_size": run.grid[0] * run.grid[1] * run.grid[2],
        "launch__block_size": run.block[0] * run.block[1] * run.block[2],
        "launch__registers_per_thread": run.regs_per_thread,
        "launch__shared_mem_per_block": run.shared_bytes,
        "launch__occupancy_limit_blocks": run.occupancy.blocks_per_sm,
    }
    flops_by_kind = flop_counts(program, counts)
    for kind, name in FLOP_METRICS.items():
        m[name] = flops_by_kind[kind]
    fp32_flops = sum(flops_by_kind[k] * I.FLOPS_PER_KIND[k] for k in (I.FLOP_FADD, I.FLOP_FMUL, I.FLOP_FFMA))
    fp64_flops = sum(flops_by_kind[k] * I.FLOPS_PER_KIND[k] for k in (I.FLOP_DADD, I.FLOP_DMUL, I.FLOP_DFMA))
    fp16_flops = sum(flops_by_kind[k] * I.FLOPS_PER_KIND[k] for k in (I.FLOP_HADD, I.FLOP_HMUL, I.FLOP_HFMA))
    m["gpusim__fp32_flops.sum"] = fp32_flops
    m["gpusim__fp64_flops.sum"] = fp64_flops
    m["gpusim__fp16_flops.sum"] = fp16_flops
    tensor = tensor_counts(program, counts, config)
    tensor_flops = tensor["gpusim__tensor_flops.sum"]
    for name in (*TENSOR_FLOP_METRICS, "gpusim__tensor_flops.sum", "sm__inst_executed_pipe_tensor_op_hmma.sum",
                 "sm__inst_executed_pipe_tensor_op_imma.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum"):
        m[name] = tensor[name]
    m["gpusim__flops.sum"] = fp32_flops + fp64_flops + fp16_flops + tensor_flops
    if not run.timing:
        return m
    c = run.counters
    cycles = run.cycles
    seconds = run.seconds
    nsp = config.sub_partitions_per_sm
    active_cycles = c["sm_active_cycles"]
    resident_warp_cycles = sum(run.stalls.values())
    dram_bytes = c["dram_read_bytes"] + c["dram_write_bytes"]
    dram_peak_bytes_per_cycle = config.dram_bandwidth_gbs * 1e9 / config.clock_hz
    load_sectors = c["l1_hit_sectors"] + c["l1_miss_sectors"]
    l2_lookups = c["l2_hit_sectors"] + c["l2_miss_sectors"]
    m.update({
        "gpu__time_duration.sum": seconds * 1e9,
        "sm__cycles_elapsed.max": cycles,
        "sm__cycles_active.avg": _ratio(active_cycles, config.sms),
        "smsp__issue_active.avg.pct_of_peak_sustained_active": 100.0 * _ratio(warp_inst, active_cycles * nsp),
        "sm__warps_active.avg.pct_of_peak_sustained_active":
            100.0 * _ratio(resident_warp_cycles, active_cycles * config.max_warps_per_sm),
        "sm__warps_active.avg.per_cycle_active": _ratio(resident_warp_cycles, active_cycles),
        "smsp__average_warp_latency_per_inst_issued.ratio": _ratio(resident_warp_cycles, warp_inst),
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": c["global_load_requests"],
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": c["global_store_requests"],
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": c["global_load_sectors"],
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": c["global_store_sectors"],
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_ideal.sum": c["global_load_ideal_sectors"],
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st_ideal.sum": c["global_store_ideal_sectors"],
        "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum": c["global_atomic_requests"],
        "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum": c["local_load_sectors"],
        "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum": c["local_store_sectors"],
        "l1tex__t_requests_pipe_tex_mem_texture.sum": c["texture_requests"],
        "l1tex__t_sectors_pipe_tex_mem_texture.sum": c["texture_sectors"],
        "l1tex__t_sector_hit_rate.pct": 100.0 * _ratio(c["l1_hit_sectors"], load_sectors),
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": c["shared_load_wavefronts"],
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": c["shared_store_wavefronts"],
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum":
            c["shared_load_wavefronts"] - c["shared_load_ideal_wavefronts"],
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum":
            c["shared_store_wavefronts"] - c["shared_store_ideal_wavefronts"],
        "smsp__inst_executed_op_shared_ld.sum": c["shared_load_requests"],
        "smsp__inst_executed_op_shared_st.sum": c["shared_store_requests"],
        "lts__t_sectors.sum": c["l2_sectors"],
        "lts__t_sector_hit_rate.pct": 100.0 * _ratio(c["l2_hit_sectors"], l2_lookups),
        "lts__t_bytes.sum": c["l2_sectors"] * config.sector_bytes,
        "dram__bytes_read.sum": c["dram_read_bytes"],
        "dram__bytes_write.sum": c["dram_write_bytes"],
        "dram__throughput.avg.pct_of_peak_sustained_elapsed":
            100.0 * _ratio(dram_bytes, cycles * dram_peak_bytes_per_cycle),
        "lts__throughput.avg.pct_of_peak_sustained_elapsed":   # slice busy time: stores at the store rate
            100.0 * _ratio((c["l2_sectors"] - c["l2_store_sectors"]) * config.sector_bytes / config.l2_bytes_per_cycle
                           + (c["l2_store_sectors"] - c["l2_partial_store_sectors"]) * config.sector_bytes
                           / config.l2_write_bytes_per_cycle
                           + c["l2_partial_store_sectors"] * config.sector_bytes
                           / config.l2_partial_write_bytes_per_cycle, cycles),
        "l1tex__throughput.avg.pct_of_peak_sustained_active":
            100.0 * _ratio((load_sectors + c["l1_store_sectors"]) * config.sector_bytes
                           + (c["shared_load_wavefronts"] + c["shared_store_wavefronts"])
                           * config.shared_banks * config.shared_bank_bytes,
                           active_cycles * config.l1_bytes_per_cycle_per_sm),
        "gpusim__flop_per_second": _ratio(fp32_flops + fp64_flops + fp16_flops + tensor_flops, seconds),
        "gpusim__tensor_flop_per_second": _ratio(tensor_flops, seconds),
        "gpusim__tensor_flops_per_cycle_per_sm": _ratio(tensor_flops, cycles * config.sms),
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active":
            100.0 * _ratio(tensor["gpusim__tensor_hmma_busy_cycles"], active_cycles * nsp),
        "sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active":
            100.0 * _ratio(tensor["gpusim__tensor_imma_busy_cycles"], active_cycles * nsp),
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active":
            100.0 * _ratio(tensor["gpusim__tensor_hmma_busy_cycles"] + tensor["gpusim__tensor_imma_busy_cycles"],
                           active_cycles * nsp),
        "gpusim__fp32_flop_per_second": _ratio(fp32_flops, seconds),
        "gpusim__dram_bytes_per_second": _ratio(dram_bytes, seconds),
        "gpusim__arithmetic_intensity": _ratio(fp32_flops + fp64_flops + fp16_flops + tensor_flops, dram_bytes),
        "gpusim__warp_instructions_per_cycle": _ratio(warp_inst, cycles),
    })
    intervals = I.pipe_intervals(config)
    for pipe, name in enumerate(I.PIPE_NAMES):
        if name in PIPE_METRICS and pipe != I.PIPE_TENSOR:  # the tensor pipe's: per form, set above
            busy = c[f"pipe_{name}_issues"] * int(intervals[pipe])
            m[PIPE_METRICS[name]] = 100.0 * _ratio(busy, active_cycles * nsp)
    for name, value in run.stalls.items():
        m[f"smsp__pcsamp_warps_issue_stalled_{name}.sum"] = value
    return m
