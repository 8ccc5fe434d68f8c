"""Timing of Hopper's ``wgmma.mma_async`` (docs/tensor-cores.md, "Hopper: wgmma"), reached from
``issue.memory_timing`` for a ``MK_WGMMA`` request (``gpusim.engine.semantics.wgmma`` sets it).

The warp does not wait for a wgmma: it puts it in its sub-partition's wgmma queue, whose issue port
(``PIPE_WGMMA``) takes one per ``wgmma_issue_cycles`` (booked by ``issue.book_issue``: the ISA table's
interval of the wgmma forms), and goes on. The queue holds ``wgmma_queue_depth`` wgmmas, the one in the tensor
pipe included: a warp that issues another while it is full waits (math-pipe throttle) for a place. The
tensor pipe of the sub-partition takes the queue in order, each wgmma for its form's time
(``wgmma_n8_interval_cycles`` per 8 columns of N), shared with mma.sync on the same pipe. Its
shared-memory operand bytes (this warp's 16 rows of A when A comes from a descriptor, and a quarter of B,
which the warpgroup's four warps share) go through the SM's shared-memory data path when it is issued, and
its result is ready ``wgmma_latency_cycles`` + (N / 8 - 1) intervals after the pipe starts it (its operands
arrived). That completion extends the warp's open wgmma group; ``wgmma.commit_group`` closes it and
``wgmma.wait_group N`` holds the warp until all but the newest N committed groups are complete
(``async_timing.async_copy_groups`` on the wgmma columns of ``cp_state``).
"""

from __future__ import annotations

from gpusim.arch import isa as I
from gpusim.engine.jit import compiled_only
from gpusim.engine.memory.servers import server_reserve
from gpusim.engine.semantics import state as S
from gpusim.engine.sm import timing_state as T
from gpusim.engine.sm.pipes import hold_pipe


@compiled_only
def wgmma_timing(mp, w, sm, sub, cycle):
    """Book warp ``w``'s wgmma issued at ``cycle`` on sub-partition ``sub``; returns ``cycle`` (the warp goes
    on at once)."""
    req = mp.mem_req
    prm = mp.prm
    start = cycle
    nbytes = req[S.MR_BYTES]
    if nbytes > 0:
        begin, _ = server_reserve(mp.shared_path, sm, cycle, nbytes, prm[T.TP_SHARED_BYTES_PER_CYCLE])
        start = max(cycle, int(begin))
    eights = req[S.MR_SIZE] // 8
    busy = eights * prm[T.TP_WGMMA_N8_INTERVAL]
    start = max(start, mp.pipe_free[sub, I.PIPE_TENSOR])        # behind the queue's earlier wgmmas
    hold_pipe(mp.pipe_free, mp.pipe_busy_acc, mp.pipe_busy_t0, sub, I.PIPE_TENSOR, cycle, start + busy)
    # the queue has a place for the next one when at most depth - 1 remain, this one's included
    place = start + busy - (prm[T.TP_WGMMA_QUEUE] - 1) * busy
    if place > cycle + 1:
        hold_pipe(mp.pipe_free, mp.pipe_busy_acc, mp.pipe_busy_t0, sub, I.PIPE_WGMMA, cycle, place)
    done = start + prm[T.TP_WGMMA_LATENCY] + (eights - 1) * prm[T.TP_WGMMA_N8_INTERVAL]
    column = T.CP_WGMMA + T.CP_OPEN
    if done > mp.cp_state[w, column]:
        mp.cp_state[w, column] = done
    mp.last_sectors[0] = 0
    return cycle
