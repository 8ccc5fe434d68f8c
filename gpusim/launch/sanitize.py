"""The sanitizers (``GPU(..., sanitize={"memcheck", "racecheck", "synccheck", "initcheck"})``, as
compute-sanitizer's four tools) and the hardware-tolerant defaults, host side: which engine checks a launch
turns on, and what a finished launch reports.

Defaults (no sanitizer), as the hardware behaves:

* threads that exited count as arrived at a block-wide barrier on compute capability 7.0 and later (before
  7.0 such a barrier is a synccheck error, as there exited threads never arrive);
* shared memory is addressable up to the block's allocation granule (static + dynamic + the driver's
  reserved shared memory, rounded up to ``shared_allocation_unit_bytes``, less the reserved part, which
  comes first); past it an access still faults (``IllegalAddressError``).

A run where either happened carries a one-line warning (``run.warnings``) with the count and the sanitizer
that gives the details.

Tools: memcheck makes the declared shared size exact (``MemcheckError``; global accesses are always checked
exactly against their allocation); synccheck makes an exited thread at a barrier an error
(``SynccheckError``); racecheck records shared-memory hazards (``gpusim.engine.semantics.racecheck``) and
initcheck every read of never-written global memory (``memops.resolve_noting``; the kernel reads the bytes
as they are and goes on, as under compute-sanitizer); at the end of the run each puts a report like
compute-sanitizer's in ``run.sanitizer_report`` and raises ``RacecheckError`` / ``InitcheckError`` (or only
reports, with ``GPU(..., sanitize_action="report")``). memcheck and synccheck stop the kernel at their first
finding, as the fault they stand for would.
"""

from __future__ import annotations

import sys

import numpy as np

from gpusim.engine.semantics import state as S
from gpusim.engine.semantics.racecheck import race_findings, race_overflow
from gpusim.errors import ConfigError, InitcheckError, RacecheckError
from gpusim.launch.device_memory import hex_address

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
ACTIONS = ("raise", "report")
HAZARD_NAMES = {S.RACE_RAW: ("Write", "Read", "read-after-write"), S.RACE_WAR: ("Read", "Write", "write-after-read"),
                S.RACE_WAW: ("Write", "Write", "write-after-write"),
                S.RACE_WAW_SAME: ("Write", "Write", "write-after-write of the same value")}
"""Per hazard kind: the earlier and the later access, and the hazard's name."""


def parse_sanitize(value) -> frozenset:
    """The set of tools ``value`` names: None, a name, a comma list or an iterable of names."""
    if value is None:
        return frozenset()
    if isinstance(value, str):
        names = [part.strip() for part in value.split(",") if part.strip()]
    else:
        try:
            names = list(value)
        except TypeError:
            raise ConfigError(f"sanitize takes a tool name or a set of them ({', '.join(TOOLS)}), got {value!r}",
                              field="sanitize") from None
    for name in names:
        if name not in TOOLS:
            raise ConfigError(f"unknown sanitizer {name!r}: the tools are {', '.join(TOOLS)} (as compute-sanitizer's "
                              "--tool)", field="sanitize")
    return frozenset(names)


def check_action(action) -> str:
    if action not in ACTIONS:
        raise ConfigError(f"sanitize_action must be 'raise' (a sanitizer's findings raise its error at the end of "
                          f"the run) or 'report' (only run.sanitizer_report), got {action!r}", field="sanitize_action")
    return action


def shared_limit(config, total_shared: int) -> int:
    """Shared bytes a block may touch: its allocation (rounded up to the allocation unit with the driver's
    reserved part, which comes first), less the reserved part."""
    reserved = int(config.shared_reserved_bytes_per_block)
    unit = max(int(config.shared_allocation_unit_bytes), 1)
    if total_shared <= 0:
        return 0
    return -(-(total_shared + reserved) // unit) * unit - reserved


def configure(gpu, launch) -> None:
    """Set the launch's sanitizer fields from the GPU's ``sanitize`` and ``synccheck`` and its config."""
    tools: frozenset[str] = getattr(gpu, "sanitize", frozenset())
    synccheck = getattr(gpu, "synccheck", None)
    if "synccheck" in tools or synccheck is True:
        mode = S.SYNC_STRICT
    elif synccheck is False:
        mode = S.SYNC_OFF
    else:
        mode = S.SYNC_HARDWARE if gpu.config.cc_major >= 7 else S.SYNC_STRICT
    launch[S.L_SYNCCHECK] = mode
    launch[S.L_SHARED_LIMIT] = shared_limit(gpu.config, int(launch[S.L_SHARED_BYTES]))
    launch[S.L_MEMCHECK] = 1 if "memcheck" in tools else 0
    launch[S.L_RACECHECK] = 1 if "racecheck" in tools else 0


def _where(program, pc: int) -> str:
    from gpusim.launch.faults import where

    return where(program, pc)


def hardware_warnings(m, program) -> list[str]:
    """One line per thing a sanitizer would report that the hardware runs (``hw_notes``)."""
    notes = m.hw_notes
    out = []
    if notes[S.HN_EXIT_BAR]:
        block = int(notes[S.HN_EXIT_BAR_BLOCK])
        out.append(f"kernel '{program.name}': {int(notes[S.HN_EXIT_BAR])} warp arrival(s) at a block-wide barrier "
                   f"found threads of the block exited without reaching it (first: block {block}, "
                   f"{_where(program, int(notes[S.HN_EXIT_BAR_PC]))}); they count as arrived, as on compute "
                   "capability 7.0+; details: GPU(..., sanitize='synccheck')")
    if notes[S.HN_SHARED_OVER]:
        out.append(f"kernel '{program.name}': {int(notes[S.HN_SHARED_OVER])} shared-memory access(es) past the "
                   f"declared {int(m.launch[S.L_SHARED_BYTES])} bytes, inside the block's allocation of "
                   f"{int(m.launch[S.L_SHARED_LIMIT])} (first: shared address "
                   f"{int(notes[S.HN_SHARED_OVER_ADDRESS])} at {_where(program, int(notes[S.HN_SHARED_OVER_PC]))}); "
                   "they run as on the hardware; details: GPU(..., sanitize='memcheck')")
    return out


def _thread(m, tid: int) -> tuple:
    tx, ty = int(m.launch[S.L_NTID_X]), int(m.launch[S.L_NTID_Y])
    return (tid % tx, (tid // tx) % ty, tid // (tx * ty))


def _block(m, block: int) -> tuple:
    gx, gy = int(m.launch[S.L_NCTAID_X]), int(m.launch[S.L_NCTAID_Y])
    return (block % gx, (block // gx) % gy, block // (gx * gy))


def _access(program, pc: int) -> str:
    """``kernel+0xPC in file.cu:line (PTX file:line `text`)``, as compute-sanitizer names an access."""
    cuda = ""
    if 0 <= pc < program.n_inst:
        from gpusim.arch import layout as L

        src_line = int(program.code[pc, L.F_SRCLINE])
        if src_line:
            cuda = f" in CUDA line {src_line}"
    return f"{program.name}+pc {pc}{cuda} ({_where(program, pc)})"


def racecheck_report(m, program) -> tuple[str, list[dict]]:
    """compute-sanitizer racecheck's report of the launch's hazards, and the hazards as dicts."""
    found = race_findings(m)
    hazards = [h for h in found if h["kind"] != S.RACE_WAW_SAME] + [h for h in found if h["kind"] == S.RACE_WAW_SAME]
    lines = []
    for h in hazards:
        first, second, kind = HAZARD_NAMES[h["kind"]]
        h["type"] = "write-after-write" if h["kind"] == S.RACE_WAW_SAME else kind
        h["severity"] = "warning" if h["kind"] == S.RACE_WAW_SAME else "error"
        h["block"] = _block(m, h["block"])
        h["thread0"] = _thread(m, h["tid0"])
        h["thread1"] = _thread(m, h["tid1"])
        h["line0"] = program.lines[h["pc0"]] if 0 <= h["pc0"] < program.n_inst else 0
        h["line1"] = program.lines[h["pc1"]] if 0 <= h["pc1"] < program.n_inst else 0
        lines += [f"========= {h['severity'].capitalize()}: Race reported between {first} access at "
                  f"{_access(program, h['pc0'])}",
                  f"=========     and {second} access at {_access(program, h['pc1'])} "
                  f"[{h['count']} hazard{'s' if h['count'] != 1 else ''}]",
                  f"=========     ({kind}: shared address 0x{h['address']:x}, block {h['block']}, threads "
                  f"{h['thread0']} then {h['thread1']})",
                  "========="]
    more = race_overflow(m)
    if more:
        lines.append(f"========= and {more} more hazard(s) between other pairs of instructions")
    n = len(hazards)
    errors = sum(h["severity"] == "error" for h in hazards)
    lines.append(f"========= RACECHECK SUMMARY: {n} hazard{'s' if n != 1 else ''} displayed "
                 f"({errors} error{'s' if errors != 1 else ''}, {n - errors} warning{'s' if n - errors != 1 else ''})")
    return "\n".join(lines), hazards


def initcheck_report(m, program, heap) -> tuple[str, list[dict]]:
    """compute-sanitizer initcheck's report of the launch's reads of never-written global memory, and one dict
    per reading instruction."""
    found = np.asarray(m.init_found)
    reads: list[dict] = []
    lines: list[str] = []
    for i in range(found.shape[0] - 1):
        if found[i, S.IF_COUNT] == 0:
            break
        pc, address, size = int(found[i, S.IF_PC]), int(found[i, S.IF_ADDRESS]), int(found[i, S.IF_BYTES])
        read = {"pc": pc, "line": program.lines[pc] if 0 <= pc < program.n_inst else 0,
                "thread": _thread(m, int(found[i, S.IF_TID])), "block": _block(m, int(found[i, S.IF_BLOCK])),
                "address": address, "bytes": size, "count": int(found[i, S.IF_COUNT])}
        reads.append(read)
        where = heap.allocation_of(address) if heap is not None else ""
        lines += [f"========= Uninitialized __global__ memory read of size {size} bytes",
                  f"=========     at {_access(program, pc)}",
                  f"=========     by thread {read['thread']} in block {read['block']}",
                  f"=========     Address {hex_address(address)}" + (f" ({where})" if where else "")
                  + f" [{read['count']} access{'es' if read['count'] != 1 else ''} of this instruction]",
                  "========="]
    more = int(found[-1, S.IF_COUNT])
    if more:
        lines.append(f"========= and {more} more uninitialized read(s) by other instructions")
    total = sum(int(r["count"]) for r in reads) + more
    lines.append(f"========= ERROR SUMMARY: {total} error{'s' if total != 1 else ''}")
    return "\n".join(lines), reads


def _race_error(program, hazards, report):
    errors = [h for h in hazards if h["severity"] == "error"]
    if not errors:
        return None
    first = errors[0]
    return RacecheckError(f"racecheck: kernel '{program.name}': {len(errors)} shared-memory hazard(s); the first: "
                          f"{first['type']} between {_where(program, first['pc0'])} (thread {first['thread0']}) "
                          f"and {_where(program, first['pc1'])} (thread {first['thread1']}) in block "
                          f"{first['block']} at shared address 0x{first['address']:x}, with no barrier between "
                          f"them\n{report}", kernel=program.name, hazards=tuple(hazards), report=report)


def _init_error(program, reads, report):
    first = reads[0]
    total = sum(int(r["count"]) for r in reads)
    error = InitcheckError(f"uninitialized global memory read (initcheck): kernel '{program.name}': {total} read(s) "
                           f"by {len(reads)} instruction(s); the first: block {first['block']} thread "
                           f"{first['thread']} at {_where(program, first['pc'])}: address "
                           f"{hex_address(first['address'])} was never written by the host or a kernel\n{report}",
                           kernel=program.name, block=first["block"], thread=first["thread"], line=first["line"],
                           address=first["address"])
    error.report = report
    error.reads = tuple(reads)
    return error


def finish(gpu, run, m, program):
    """Attach the warnings and sanitizer reports of a finished launch to ``run``; raise RacecheckError when
    racecheck found hazards that are errors, else InitcheckError when initcheck found reads of never-written
    memory (unless ``sanitize_action="report"``); racecheck's warnings (a write of the value already there)
    are only reported."""
    run.warnings = hardware_warnings(m, program)
    reports, errors = [], []
    if int(m.launch[S.L_RACECHECK]) != 0:
        report, hazards = racecheck_report(m, program)
        reports.append(report)
        run.hazards = hazards
        errors.append(_race_error(program, hazards, report))
    if getattr(gpu, "initcheck", False) or int(m.init_found[0, S.IF_COUNT]) != 0:
        report, reads = initcheck_report(m, program, getattr(gpu, "heap", None))
        reports.append(report)
        run.uninitialized_reads = reads
        errors.append(_init_error(program, reads, report) if reads else None)
    run.sanitizer_report = "\n".join(reports)
    raised = [error for error in errors if error is not None]
    if raised and getattr(gpu, "sanitize_action", "raise") == "raise":
        raise raised[0]
    return run


def print_assertion(messages) -> None:
    for line in messages:
        print(line, file=sys.stderr)
