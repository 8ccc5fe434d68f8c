"""Lowering of Hopper's launch-control instructions (issue 25): ``setmaxnreg`` and ``griddepcontrol``.

``setmaxnreg.{inc,dec}.sync.aligned.u32 N`` asks the CTA's register pool for a new per-thread register maximum for
the executing warp (PTX ISA, setmaxnreg; sm_90a). The ISA calls it a hint and gives it no visible effect on
values: registers a warp keeps hold their contents. gpusim allocates registers per launch (``regs``, the
occupancy calculator), so the row is checked here -- N a constant from 24 to 256 and a multiple of 8, the
target an ``sm_90a``-class one -- and issues as a no-op; the pool's blocking (an ``.inc`` waiting for another
warpgroup's ``.dec``) is not modelled (docs/tensor-cores.md).

``griddepcontrol.launch_dependents`` and ``griddepcontrol.wait`` (programmatic dependent launch, sm_90) let a
dependent grid start before its prerequisite finishes and wait for it. gpusim's host model runs a stream's
launches one after another, so when a grid starts its prerequisite has completed and its memory is visible:
``wait`` is satisfied at once and ``launch_dependents`` has nothing to release. Both issue as no-ops.
"""

from __future__ import annotations

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.ptx import ast
from gpusim.ptx.lower_common import _err, _expect_operands, _Row

LAUNCH_CONTROL_OPCODES = ("setmaxnreg", "griddepcontrol")
SETMAXNREG_MIN, SETMAXNREG_MAX, SETMAXNREG_STEP = 24, 256, 8
"""setmaxnreg's register count: 24 to 256 inclusive, a multiple of 8 (PTX ISA, setmaxnreg)."""


def _target(fl) -> str:
    return getattr(getattr(fl, "module", None), "target", None) or "sm_90a"


def _sm(target: str) -> int:
    digits = "".join(ch for ch in target.split(",")[0] if ch.isdigit())
    return int(digits) if digits else 90


def lower_launch_control(fl, ins: ast.Instruction, b: _Row) -> None:
    """Lower one ``setmaxnreg`` or ``griddepcontrol`` instruction into ``b`` (a no-op row, checked)."""
    mods = tuple(ins.mods)
    target = _target(fl)
    if ins.opcode == "setmaxnreg":
        if mods not in ((".inc", ".sync", ".aligned", ".u32"), (".dec", ".sync", ".aligned", ".u32")):
            raise _err(ins, f"'setmaxnreg{''.join(mods)}': the form is setmaxnreg.{{inc,dec}}.sync.aligned.u32 N")
        arch = target.split(",")[0].strip()
        if _sm(arch) < 90 or not arch.endswith(("a", "f")):
            raise _err(ins, f"setmaxnreg needs an architecture-specific target (sm_90a or later); this module's "
                       f".target is {arch}", unsupported=True)
        _expect_operands(ins, 1)
        count = ins.operands[0]
        if not isinstance(count, ast.Imm) or not isinstance(count.value, int):
            raise _err(ins, "setmaxnreg takes a constant register count")
        if not SETMAXNREG_MIN <= count.value <= SETMAXNREG_MAX or count.value % SETMAXNREG_STEP:
            raise _err(ins, f"setmaxnreg: the register count must be {SETMAXNREG_MIN}..{SETMAXNREG_MAX} and a "
                       f"multiple of {SETMAXNREG_STEP}, not {count.value}")
        name = f"setmaxnreg{mods[0]}"
    else:
        if mods not in ((".launch_dependents",), (".wait",)):
            raise _err(ins, f"'griddepcontrol{''.join(mods)}': the forms are griddepcontrol.launch_dependents and "
                       "griddepcontrol.wait")
        if _sm(target) < 90:
            raise _err(ins, f"griddepcontrol needs sm_90 or later; this module's .target is {target}",
                       unsupported=True)
        _expect_operands(ins, 0)
        name = f"griddepcontrol{mods[0]}"
    b.row[L.F_OP] = c.OP_NOP
    b.row[L.F_ISA] = isa.isa_row(c.OP_NOP, c.T_NONE, name)
