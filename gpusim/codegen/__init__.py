"""Code generation: the instruction stream the GPU would run, made from the lowered PTX.

PTX is a virtual ISA; the GPU runs the SASS ptxas makes of it. This stage sits between the lowering
(``gpusim.ptx.lower``: PTX -> Program code rows) and the engine, and rewrites the Program the way
ptxas rewrites the PTX, one pass per module (each module's docstring says what ptxas does and what is
modelled):

1. ``ifconvert``: short forward branches into guarded instructions (then straight-line blocks merge);
2. ``unroll``: single-block loops of a few constant trips fully (ptxas's rule, fitted to its SASS), other
   counted single-block loops x4 (not one storing to global memory through an address recomputed each
   trip, which ptxas keeps rolled), the original loop kept for the remaining trips;
3. ``fold``: immediates into operands, ``cvta.to.global`` removed;
4. ``address``: ``mul.wide``/``shl`` + ``add`` into one IMAD.WIDE/LEA-like instruction, constant
   offsets into the load's or store's address (also out of a scaled base: ``(x + K) * 4`` read as ``[x * 4
   + 4K]``);
5. ``cse``: a value computed again in the same block (an unrolled copy's loop-invariant address part) is
   computed once; ``predicates``: a comparison and the predicate logic after it in one ISETP-like
   instruction;
6. ``vectorize``: adjacent shared/global loads whose alignment is proven (``knownbits``) into one vector
   load (LDS.64/LDS.128, LDG.E.64/.128);
7. ``expand``: 64-bit integer arithmetic, 64-bit multiplies and 32-bit div/rem take the SASS
   instruction count ptxas gives them, and the kernel gets SASS's prologue;
8. ``latency``: a setp whose predicate guards an instruction or decides a branch is ready after the
   config's ``predicate_latency_cycles`` (13 in ptxas's control bits on sm_80..sm_90); a taken branch
   waits ``taken_branch_cycles`` (a BRA's stall count, 5);
9. ``schedule``: list scheduling inside basic blocks (loads first, as dependences, memory ordering and
   the register budget of ``pressure`` allow; never across barriers, fences, atomics or warp-synchronous
   operations);
10. ``regalloc`` (in either mode): registers per thread from a linear scan of the generated code under the
   launch bounds' cap (``.maxnreg``, ``.maxntid``/``.reqntid``, ``.minnctapersm``), and local-memory spill
   code for what does not fit.

Every instruction keeps its PTX line, text and CUDA line (``Program.origin`` is the lowered pc it came
from), so per-line attribution still names the PTX and CUDA source. Functional results are identical
in both modes (the passes rewrite only what they prove equal). ``mode="none"`` returns the Program as
lowered: PTX in program order, as written. A kernel with an operation the passes do not model (calls,
printf, textures, tensor-core and cp.async instructions, ``bar.warp.sync``: ``deps.unmodelled_ops``) is
left as written in either mode, and its notes say so; ``timed_mode`` says which mode actually timed a
Program (``Run.codegen``, ``Run.codegen_reason``, the report and the JSON use it).
"""

from __future__ import annotations

import dataclasses

from gpusim.codegen.address import fold_addresses, reassociate_bases
from gpusim.codegen.cse import eliminate_common
from gpusim.codegen.deps import unmodelled_ops
from gpusim.codegen.expand import add_prologue, expand_kernel
from gpusim.codegen.fold import fold_kernel
from gpusim.codegen.ifconvert import if_convert
from gpusim.codegen.ir import decode, encode, merge_straight_line
from gpusim.codegen.latency import branch_latencies, predicate_latencies
from gpusim.codegen.predicates import combine_predicates
from gpusim.codegen.regalloc import allocate, spill_code
from gpusim.codegen.schedule import schedule_kernel
from gpusim.codegen.unroll import unroll_loops
from gpusim.codegen.vectorize import vectorize_shared_loads
from gpusim.errors import ConfigError

MODES = ("ptxas", "none")
DEFAULT_CODEGEN = "ptxas"
"""The default mode of ``GPU(codegen=...)``."""


def check_mode(mode) -> str:
    if mode not in MODES:
        raise ConfigError(f"codegen must be one of {', '.join(map(repr, MODES))} ('ptxas': time the stream "
                          f"ptxas would make; 'none': the PTX as written), got {mode!r}", field="codegen")
    return mode


def timed_mode(program) -> tuple[str, str]:
    """The code generation that made ``program``'s instruction stream, and why it is not the one requested.

    Returns ``("ptxas", "")`` when the passes ran, ``("none", reason)`` otherwise: ``reason`` names the
    operations that made the stage leave the kernel as written under ``GPU(codegen="ptxas")``, or says
    that ``GPU(codegen="none")`` asked for the PTX as written. The passes ran exactly when the stream
    records where each row came from (``Program.origin``, set by ``ir.encode``).
    """
    requested = getattr(program, "codegen", "none")
    if requested != "none" and getattr(program, "origin", None) is not None:
        return requested, ""
    if requested == "none":
        return "none", 'GPU(codegen="none"): the PTX as written'
    notes = list(getattr(program, "codegen_notes", []))
    return "none", (notes[0] if notes else "left as written")


def generate(program, config, mode: str = DEFAULT_CODEGEN, spill: bool = True):
    """The Program the engine times in ``mode`` (a new Program; ``program`` is not changed), its
    ``regs_estimate`` from the register allocation of the generated code (``regalloc``); with ``spill``,
    the values that do not fit under the launch bounds' register cap are spilled (``regalloc.spill_code``).
    Pass ``spill=False`` when the registers come from elsewhere (ptxas -v, a '// gpusim: regs=' line)."""
    check_mode(mode)
    if program.codegen != "none" or any(note.startswith("regalloc:") for note in program.codegen_notes):
        return program     # already generated
    generated = program if mode == "none" else _generate(program, config, mode)
    allocation = allocate(generated, config)
    if spill and allocation.spilled:
        return spill_code(generated, allocation)
    if generated is program and allocation.registers == program.regs_estimate:
        return program
    return dataclasses.replace(generated, regs_estimate=allocation.registers)


def _generate(program, config, mode: str):
    unmodelled = unmodelled_ops(program.code)
    if unmodelled:
        texts = sorted({program.texts[pc].split()[0].rstrip(";") for pc in unmodelled})
        return dataclasses.replace(program, codegen=mode, codegen_notes=[
            f"left as written: the stage does not model {', '.join(texts)} (line "
            f"{program.lines[unmodelled[0]]}); the PTX runs in program order"])
    kernel = decode(program)
    converted = if_convert(kernel)
    merge_straight_line(kernel)
    unrolled = unroll_loops(kernel, cc=(config.cc_major, config.cc_minor))
    folded = fold_kernel(kernel)
    addressed = fold_addresses(kernel)
    addressed += reassociate_bases(kernel)
    common = eliminate_common(kernel)
    combined = combine_predicates(kernel)
    vectorized = vectorize_shared_loads(kernel)
    expanded = expand_kernel(kernel) + add_prologue(kernel)
    retimed = predicate_latencies(kernel)
    branches = branch_latencies(kernel)
    moved = schedule_kernel(kernel, config)
    kernel.notes.extend([f"ifconvert: {converted} short forward branches turned into guarded instructions",
                         f"unroll: {unrolled} counted loops unrolled x4",
                         f"fold: {folded} instructions folded into operands",
                         f"address: {addressed} address instructions folded",
                         f"cse: {common} recomputed values removed",
                         f"predicates: {combined} predicate operations folded into comparisons",
                         f"vectorize: {vectorized} loads merged into vector loads (LDS.64/.128, LDG.E.64/.128)",
                         f"expand: {expanded} companion instructions (multi-instruction SASS forms)",
                         f"latency: {retimed} predicates timed as ptxas does (predicate_latency_cycles)",
                         f"latency: {branches} branches timed as ptxas does (taken_branch_cycles when taken)",
                         f"schedule: {moved} instructions moved inside their blocks"])
    return encode(kernel, mode)
