"""Timing of Hopper's ``wgmma.mma_async`` (docs/tensor-cores.md, "Hopper: wgmma"), reached from
``issue.memory_timing`` for a ``MK_WGMMA`` request (``gpusim.engine.semantics.wgmma`` sets it).

The warp does not wait for a wgmma: issuing it keeps the tensor pipe of the warp's sub-partition busy for
its form's interval (``wgmma_n8_interval_cycles`` per 8 columns of N; booked by ``issue.book_issue`` like
any tensor form), its shared-memory operand bytes (this warp's 16 rows of A when A comes from a descriptor,
and a quarter of B, which the warpgroup's four warps share) go through the SM's shared-memory data path,
and its result is ready ``wgmma_latency_cycles`` + (N / 8 - 1) intervals after the operands start to
arrive. That completion extends the warp's open wgmma group; ``wgmma.commit_group`` closes it and
``wgmma.wait_group N`` holds the warp until all but the newest N committed groups are complete
(``async_timing.async_copy_groups`` on the wgmma columns of ``cp_state``).
"""

from __future__ import annotations

from gpusim.engine.jit import compiled_only
from gpusim.engine.memory.servers import server_reserve
from gpusim.engine.semantics import state as S
from gpusim.engine.sm import timing_state as T


@compiled_only
def wgmma_timing(mp, w, sm, cycle):
    """Book warp ``w``'s wgmma issued at ``cycle``; returns ``cycle`` (the warp goes on at once)."""
    req = mp.mem_req
    prm = mp.prm
    start = cycle
    nbytes = req[S.MR_BYTES]
    if nbytes > 0:
        begin, _ = server_reserve(mp.shared_path, sm, cycle, nbytes, prm[T.TP_SHARED_BYTES_PER_CYCLE])
        start = max(cycle, int(begin))
    done = start + prm[T.TP_WGMMA_LATENCY] + (req[S.MR_SIZE] // 8 - 1) * prm[T.TP_WGMMA_N8_INTERVAL]
    column = T.CP_WGMMA + T.CP_OPEN
    if done > mp.cp_state[w, column]:
        mp.cp_state[w, column] = done
    mp.last_sectors[0] = 0
    return cycle
