"""What a helper process compiles while a cold first launch compiles the engine's entry point.

A cold compile of ``run_timed`` (``run_functional``) is one thread's work: typing the loop, compiling
its callees depth first, then lowering and optimizing the loop's module with every callee linked in.
``compile_cache.register_split`` lets a second process take independent subtrees of the call tree
(``engine/parallel_compile.py``); here is which, chosen from numba's compile-event timings (docs/design.md,
"Speed", Cold compile) and ordered by when the entry's own compile reaches them:

* the timed loop: ``alu_eval`` (every ALU operation's exact semantics, which the entry reaches inside
  ``step_warp``) and then ``memory_timing`` with the memory system, which it reaches last;
* the functional loop: ``alu_eval``, then ``warp_op`` and ``exec_memory`` (both call ``alu_eval``).

Each root's argument types are the ones the entry's code passes, derived from the entry's own argument
types; a mismatch costs only time (the entry then compiles that function itself), and
``tests/test_parallel_compile.py`` checks them against the signatures numba compiled.

This module is imported by the launch layer (which registers the splits) and by the helper process.
"""

from __future__ import annotations

from numba.core import types

from gpusim.engine import compile_cache
from gpusim.engine.semantics.alu import alu_eval
from gpusim.engine.semantics.functional import run_functional
from gpusim.engine.semantics.memory_exec import exec_memory
from gpusim.engine.semantics.tensor import tensor_op
from gpusim.engine.semantics.texture import exec_texture
from gpusim.engine.semantics.warpops import warp_op
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.issue import memory_timing
from gpusim.engine.sm.timing import run_timed

I64, U64 = types.int64, types.uint64
ALU_EVAL_ARGS = (I64, I64, I64, I64, U64, U64, U64, U64)    # op, ty, ty2, mods, a, b, c, d
# the rest are TimingState's
MACHINE_FIELDS_IN_MEMORY_PATH = ("mem_req", "lane_addr", "warp_block", "bulk_tx", "warp_bslot")


def _fields(tuple_type) -> dict:
    return dict(zip(tuple_type.fields, tuple_type.types, strict=True))


def memory_path_type(ts, m):
    """The type of the ``MemoryPath`` ``run_timed`` builds from its ``TimingState`` and ``Machine``."""
    ts_fields, m_fields = _fields(ts), _fields(m)
    members = [(m_fields if name in MACHINE_FIELDS_IN_MEMORY_PATH else ts_fields)[name]
               for name in T.MEMORY_PATH_FIELDS]
    return types.BaseTuple.from_types(members, T.MemoryPath)


def code_row_type(code):
    """The type of one instruction's row, ``code[pc]``."""
    return types.Array(code.dtype, 1, "C", readonly=not code.mutable, aligned=code.aligned)


def timed_roots(ts, m, ms, code, budget):
    row = code_row_type(code)
    memory = (memory_timing, (memory_path_type(ts, m), ms, I64, I64, I64, I64, I64))  # mp, ms, w, sm, sub, pc, cycle
    return [(alu_eval, ALU_EVAL_ARGS),
            (tensor_op, (m, row, I64, I64, I64)),      # m, row, pc, w, mask
            (exec_texture, (m, row, I64, I64, I64)),   # m, row, pc, w, mask
            memory]


def functional_roots(m, code, n_blocks, limit, ctl, fw, budget, resident):
    row = code_row_type(code)
    return [(alu_eval, ALU_EVAL_ARGS),
            (warp_op, (m, row, I64, I64)),             # m, row, w, mask
            (exec_memory, (m, row, I64, I64, I64))]    # m, row, pc, w, mask


compile_cache.register_split(run_timed, timed_roots)
compile_cache.register_split(run_functional, functional_roots)
