"""The engine's state is what its declarations say (gpusim/engine/records.py, docs/engine-state.md).

The allocation is checked against sizes computed here from the arguments (not read back from the
declarations), the constants against their declared positions, and the generated blocks' staleness check
is shown to fail on a changed declaration.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gpusim.arch.isa import N_ISA_FIELDS, N_PIPES
from gpusim.engine import records as R
from gpusim.engine.memory import cache as CACHE
from gpusim.engine.memory import dram as DRAM
from gpusim.engine.memory import memsys as MS
from gpusim.engine.semantics import state as S
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.stalls import N_STATES
from scripts import doc_tables as DOC_TABLES

MODULES = (S, T, MS, CACHE, DRAM)
HAND_WRITTEN = {"CP_RING", "CP_WGMMA", "RF_MAX"}   # sizes and offsets next to a column prefix, not columns


def _machine(racecheck: int = 0) -> S.Machine:
    launch = np.zeros(S.LAUNCH_FIELDS, np.int64)
    launch[S.L_SHARED_LIMIT] = 256
    launch[S.L_RACECHECK] = racecheck
    return S.make_machine(warp_slots=12, n_regs=7, stack_depth=5, block_slots=3, shared_bytes=100, local_bytes=13,
                          heap=np.zeros(64, np.uint8), valid=np.zeros(64, np.uint8), params=np.zeros(16, np.uint8),
                          launch=launch, n_inst=9, printf_bytes=20)


def _timing(capacity: int = 0) -> T.TimingState:
    prm = np.zeros(T.N_TP, np.int64)
    prm[T.TP_NSM], prm[T.TP_NSP], prm[T.TP_SLOTS], prm[T.TP_BSLOTS], prm[T.TP_BANKS] = 2, 4, 6, 3, 32
    return T.make_timing_state(prm=prm, isa_table=np.zeros((5, N_ISA_FIELDS), np.int64),
                               pipe_interval=np.ones(N_PIPES, np.int64), n_regs=7, n_inst=9, trace_capacity=capacity)


def test_the_machine_has_the_shapes_of_its_arguments():
    m = _machine()
    assert m.regs.shape == (12, 7, 32) and m.regs.dtype == np.uint64
    assert m.stk_pc.shape == m.stk_rpc.shape == m.stk_mask.shape == (12, 5)
    assert (m.stk_rpc == -1).all() and (m.sp == -1).all() and not m.stk_pc.any()
    assert m.shared8.shape == (3, 256) and m.shared64.shape == (3, 32)   # the allocation granule, not 100
    assert m.local8.shape == (12 * 32, 16) and m.printf8.shape == (24,)
    assert np.shares_memory(m.mem8, m.mem64) and np.shares_memory(m.shared8, m.shared32)
    assert m.pc_counts.shape == (9, 3) and m.mem_req.shape == (13,) and m.err.shape == (8,)
    assert m.race_shadow.shape == (1, 1, 3) and m.race_warp.shape == (1, 2)     # racecheck off: placeholders
    raced = _machine(racecheck=1)
    assert raced.race_shadow.shape == (3, 256, 3) and raced.race_warp.shape == (12, 2)
    assert raced.race_bstamp.shape == (3,) and raced.race_found.shape == (S.RF_MAX, 8)


def test_the_timing_state_has_the_shapes_of_its_geometry():
    ts = _timing(capacity=10)
    warps, subs = 2 * 6, 2 * 4
    assert ts.w_done.shape == (warps,) and (ts.w_done == 1).all() and (ts.w_group == 1).all()
    assert ts.w_eval.shape == (2 * 4 * 2,) and (ts.w_eval == 1 << 62).all()    # ceil(6 / 4) = 2 per sub
    assert ts.pipe_free.shape == (subs, N_PIPES) and (ts.sched_last == -1).all()
    assert (ts.b_block == -1).all() and ts.b_block.shape == (2 * 3,)
    assert ts.reg_ready.shape == ts.reg_dep.shape == (warps, 7) and ts.reg_ready.base is ts.reg_dep.base
    assert ts.reg_ready.strides == (7 * 2 * 8, 2 * 8)     # interleaved: a register's ready cycle, then its class
    assert ts.pc_stalls.shape == (9, N_STATES) and ts.stalls.shape == (N_STATES,)
    assert ts.trace.shape == (10, 6) and ts.mem_trace.shape == (10, 9) and ts.issue_trace.shape == (10, 7)
    assert ts.cp_state.shape == (warps, 2 * (3 + 16)) and ts.shared_path.dtype == np.float64   # cp.async, then wgmma
    assert _timing().trace.shape == (0, 6)


@pytest.mark.parametrize("make, record", [(_machine, S.MACHINE), (_timing, T.TIMING_STATE)])
def test_every_array_has_its_declared_dtype_and_rank(make, record):
    state = make()
    assert type(state)._fields == record.field_names()
    for f in record.fields:
        array = getattr(state, f.name)
        assert array.dtype == np.dtype(f.dtype) and array.ndim == len(f.shape), f.name


def _declared(module, kind):
    return [d for d in R.declarations(vars(module)) if isinstance(d, kind)]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_column_constants_are_plain_ints_at_their_declared_positions(module):
    for decl in _declared(module, R.Columns):
        for i, column in enumerate(decl.columns):
            value = getattr(module, decl.prefix + column.name)
            assert type(value) is int and value == i, decl.prefix + column.name   # numba folds int globals
        assert getattr(module, decl.count) == decl.size >= len(decl.columns)
        stray = {name for name in vars(module) if name.startswith(decl.prefix) and name not in decl.constants()}
        assert stray <= HAND_WRITTEN, f"{sorted(stray)} use the column prefix {decl.prefix} but are not declared"


def test_every_declaring_module_is_rendered_by_the_doc_script():
    assert set(DOC_TABLES.STATE_MODULES) == {m.__name__ for m in MODULES}
    assert list(MS.COUNTERS) == [c.name.lower() for c in MS.MEMORY_COUNTERS.columns]
    assert MS.COUNTERS["dram_read_bytes"] == (MS.C_DRAM_READ_BYTES, "bytes", "bytes read from DRAM (L2 sector fills)")


def test_kind_values_and_field_indices_are_separate_namespaces():
    columns = {d.prefix for m in MODULES for d in _declared(m, R.Columns)}
    kinds = {d.prefix for m in MODULES for d in _declared(m, R.Kinds)}
    assert not any(k.startswith(c) or c.startswith(k) for k in kinds for c in columns), (kinds, columns)
    assert S.MK_LOAD != 0 and len({k.value for k in S.MEM_KINDS.kinds}) == len(S.MEM_KINDS.kinds)
    assert not hasattr(S, "MR_LOAD") and S.MR_KIND == 3


def test_allocate_rejects_a_given_array_that_is_not_the_declared_one():
    record = R.Record("Pair", "test", (R.Field("a", "int64", ("N",), "-", "-"),
                                       R.Field("b", "uint8", ("N",), "-", "-", given=True)))
    out = R.allocate(record, {"N": 4}, {"b": np.zeros(4, np.uint8)})
    assert out["a"].shape == (4,) and out["a"].dtype == np.int64
    with pytest.raises(ValueError, match=r"Pair\.b: declared uint8\['N'\], passed int64\[4\]"):
        R.allocate(record, {"N": 4}, {"b": np.zeros(4, np.int64)})
    with pytest.raises(ValueError, match=r"Pair\.b: declared shape \(4,\), passed \(5,\)"):
        R.allocate(record, {"N": 4}, {"b": np.zeros(5, np.uint8)})
    with pytest.raises(ValueError, match="Pair.b is declared given but was not passed"):
        R.allocate(record, {"N": 4}, {})


def test_the_generated_blocks_are_current_and_the_check_fails_on_a_changed_declaration(monkeypatch):
    assert DOC_TABLES.source_problems() == []
    doc_before = DOC_TABLES.render_engine_state({})
    grown = dataclasses.replace(S.LAUNCH, columns=S.LAUNCH.columns + (R.Column("NEW", "flag", "a new field"),))
    monkeypatch.setattr(S, "LAUNCH", grown)
    found = DOC_TABLES.source_problems()
    assert len(found) == 1 and "block state-layout:launch is not generated from its declaration" in found[0]
    new = len(grown.columns) - 1     # the new column's index: after the declared ones
    assert f"| {new} | `L_NEW` | flag | a new field |" in DOC_TABLES.render_engine_state({}) != doc_before
    assert f"L_NEW = {new}\nLAUNCH_FIELDS = {new + 1}\n" in R.render_source(grown)
