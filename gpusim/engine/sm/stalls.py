"""Warp states, named as Nsight Compute names its warp stall reasons.

Every resident warp is, every cycle, in exactly one of these states; the
timing loop charges whole intervals (a state holds until the warp's next
possible issue cycle), so skipped cycles are charged in one step.

=================== =========================================================
state               the warp ...
=================== =========================================================
selected            issued an instruction this cycle
not_selected        could issue, but its scheduler picked another warp
long_scoreboard     waits for a global/local memory result (L1TEX)
short_scoreboard    waits for an MIO result: shared memory, SFU, shuffle
wait                waits for a fixed-latency result (ALU, FMA, FP64)
barrier             waits at bar.sync for the rest of its block
math_pipe_throttle  its next instruction's math pipe is busy
lg_throttle         the LSU (global/local) queue is busy, or MSHRs are full
mio_throttle        the MIO (shared memory / shuffle) queue is busy
branch_resolving    waits for a taken branch to resolve
no_instruction      waits for its first instruction after the block started
drain               exited, waits for its stores to drain
membar              waits at a memory barrier for outstanding memory
dispatch_stall      waits for its block's dispatch to finish
sleeping            waits in nanosleep
=================== =========================================================
"""

from __future__ import annotations

SELECTED = 0
NOT_SELECTED = 1
LONG_SCOREBOARD = 2
SHORT_SCOREBOARD = 3
WAIT = 4
BARRIER = 5
MATH_PIPE_THROTTLE = 6
LG_THROTTLE = 7
MIO_THROTTLE = 8
BRANCH_RESOLVING = 9
NO_INSTRUCTION = 10
DRAIN = 11
MEMBAR = 12
DISPATCH_STALL = 13
SLEEPING = 14
N_STATES = 15

STATE_NAMES = ("selected", "not_selected", "long_scoreboard", "short_scoreboard", "wait", "barrier",
               "math_pipe_throttle", "lg_throttle", "mio_throttle", "branch_resolving", "no_instruction",
               "drain", "membar", "dispatch_stall", "sleeping")
