"""DRAM channels with banks, row buffers, refresh and read/write turnaround, behind a per-channel scheduler.

What it models
    A DRAM request is one column access of ``burst_bytes`` (a 32 B sector: HBM2 pseudo-channel BL4 x 64 bit,
    HBM3 BL8 x 32 bit, GDDR6 BL16 x 16 bit). Its address picks

    * a channel (a pseudo-channel on HBM): the XOR-folded index of its ``interleave_bytes`` block modulo the
      channel count, as the L2 picks slices (``dram_channel_of``);
    * inside the channel, from the channel-local address ``(block // channels) * interleave + offset``:
      the bursts of one interleave block are consecutive columns of one row; above them the fields named by
      the address map (``MAP_FIELDS``, least significant first: the rest of the column, the bank group, the
      bank, the row) in mixed radix; the bank (bank group x banks + bank) is then rotated by the row number,
      a permutation-based interleaving (Zhang, Zhu and Zhang, MICRO 2000) so that power-of-two strides do
      not pile onto one bank.

    Each bank holds one open row (open-page policy). A column access to the open row is a *row hit*; to a
    closed bank it pays an activation (ACT then ``tRCD``); to a bank with another row open a *conflict*
    (PRE no earlier than ``tRAS`` after that row's ACT, ``tRP``, ACT, ``tRCD``). Column commands of a channel
    are spaced by ``tCCD_S`` (never closer than one burst on the data bus) and those of one bank group by
    ``tCCD_L``. Each bank is refreshed once every ``tREFI`` for ``tRFC``, the first round one ``tREFI`` after
    the launch starts (a launch begins as if a round had just ended, so short kernels see none); a refresh
    closes the bank's row and a command that falls in the window waits for its end. Per-bank refresh
    staggers the banks of a channel, so the scheduler serves other banks meanwhile; all-bank refresh
    (``dram_refresh = "all_bank"``) refreshes a whole channel at once, staggered over the channels, and its
    bus carries nothing for ``tRFC``: the channel loses tRFC / tREFI of its bandwidth, and a request that
    meets a window waits up to tRFC (the tail that makes a block of many warps wait for its slowest).
    Writes are buffered per channel and drained in batches (``write_batch``
    writes, the span between a controller's write-queue watermarks): the write that fills the batch books
    the drain on the bus, which turns around (read-to-write ``tRTW``), serves the batch's writes back to
    back (each opening its row in its bank as a read would) and turns back (write-to-read ``tWTR``). Reads
    arriving meanwhile wait for the whole drain: what makes a load's latency grow with the write traffic
    beside it even at low load (validation case copy_latency_h200). A write is accepted at once while
    fewer than two batches are pending (one draining, one filling), else when the older drain ends; the
    writes of a batch not yet full cost the bus nothing until it fills.

    The scheduler is FR-FCFS over a bounded window: a request whose row is the one a queued (not yet served)
    request of the same bank opens is served right after it as a row hit instead of closing and reopening
    the row (the channel remembers its last ``queue_depth`` requests).

Latency convention
    ``dram_latency_cycles`` is the unloaded load-to-use latency of a *row conflict*, what a pointer chase
    over a large array measures on an open-page controller. The fixed part (controller, PHY, CAS latency,
    return path) is that minus ``tRP + tRCD + burst``; an isolated access to an idle bank is ``tRP`` faster
    and an isolated row hit ``tRP + tRCD`` faster. Queueing at banks, bank groups and the bus adds on top,
    so loaded latency grows with load.

State (float64 arrays, allocated by ``dram_setup.make_dram_state``, passed in the memory system's ``servers`` tuple)
    channels   [channels * CH_FIELDS]: CH_BUS_FREE (next column slot), CH_WRITES (writes since the last
               drain), CH_QUEUE_HEAD, CH_ROW_HITS / CH_ROW_EMPTY / CH_ROW_CONFLICTS (request counts)
    banks      [channels * banks * BK_FIELDS]: BK_ROW (open row, -1 closed), BK_ACT (cycle of its ACT),
               BK_READY (cycle of the bank's last column command), BK_REFRESH (index of the last refresh)
    groups     [channels * bank_groups]: next column slot of each bank group (``tCCD_L`` apart)
    queue      [channels * queue_depth * Q_FIELDS]: ring of (bank, row, column cycle) of the channel's last requests
    The geometry, timing and state fields are declared once below (``GEOMETRY``, ``TIMING``, ``CHANNEL``, ``BANK``,
    ``QUEUE``; see gpusim/engine/records.py): their constants are generated blocks, their tables are in
    docs/engine-state.md.

Choices and simplifications
    * Time is in float64 core cycles (DRAM timings converted from ns at the core clock), deterministic for a
      fixed call order. Requests are timed when the engine calls, in call order.
    * Column slots are *work-conserving*: a request takes the channel's (and bank group's) next slot at or
      after its arrival; when its bank is not ready until later it uses the bus later, and the slot it
      reserved counts as used by a request a reordering scheduler would have moved into it. The bus thus
      never carries more than one burst per slot on average, and a request waiting for its bank (a refresh,
      an activation) does not hold up requests to other banks. Under all-bank refresh no other request
      could use a slot inside the channel's window, so slots start after it.
    * Row commands are not limited by tRRD / tFAW, nor reads by tRTP; write recovery (tWR) is not modelled.
    * Which refresh NVIDIA's controllers issue is not published: the h200 and h100-sxm configs choose
      all-bank, as their read ceiling (92 % of peak on an H200) and loaded latency say (configs/h200.toml).
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.bits import quotient
from gpusim.engine.jit import compiled_only, engine_jit
from gpusim.engine.memory.cache import xor_fold_hash
from gpusim.engine.records import Column, Columns, Kind, Kinds

GEOMETRY = Columns("dram-geometry", "geometry (ms.params[P_DRAM_GEOMETRY:])", "G_", "N_GEOMETRY",
                   "DRAM geometry (dram_setup.make_dram_params), int64", (
    Column("CHANNELS", "channels", "channels (pseudo-channels on HBM)"),
    Column("BANK_GROUPS", "groups", "bank groups per channel"),
    Column("BANKS_PER_GROUP", "banks", "banks per bank group"),
    Column("BURST_BYTES", "bytes", "bytes of one column access (a sector)"),
    Column("ROW_BURSTS", "bursts", "column accesses per row"),
    Column("INTERLEAVE_BYTES", "bytes", "channel interleave block (consecutive columns of one row)"),
    Column("QUEUE_DEPTH", "requests", "scheduler window per channel"),
    Column("WRITE_BATCH", "writes", "writes drained per bus turnaround"),
    Column("REFRESH_ALL", "flag", "1: all-bank refresh (the whole channel, its bus idle), 0: per-bank"),
    Column("MAP", "field codes", "first of 4 address-map field codes (F_*), least significant first"),
), width=13)
MAP_FIELD_CODES = Kinds("dram-map-fields", "geometry[G_MAP .. G_MAP + 3]", "F_",
                        "address-map fields (parse_address_map)", (
    Kind("COLUMN", 0, "column within the row"),
    Kind("BANKGROUP", 1, "bank group"),
    Kind("BANK", 2, "bank within the bank group"),
    Kind("ROW", 3, "row"),
))
TIMING = Columns("dram-timing", "timing (ms.rates[R_DRAM_TIMING:])", "T_", "N_TIMING",
                 "DRAM timing in core cycles (dram_setup.make_dram_params), float64", (
    Column("RCD", "cycles", "ACT to column command"),
    Column("RP", "cycles", "precharge"),
    Column("RAS", "cycles", "ACT to precharge, least"),
    Column("BURST", "cycles", "one burst at the channel's peak rate"),
    Column("CCD_S", "cycles", "column commands in different bank groups"),
    Column("CCD_L", "cycles", "column commands in one bank group"),
    Column("WTR", "cycles", "write to read turnaround"),
    Column("RTW", "cycles", "read to write turnaround"),
    Column("REFI", "cycles", "refresh interval (0: no refresh)"),
    Column("RFC", "cycles", "refresh duration"),
    Column("FIXED", "cycles", "dram_latency_cycles - (tRP + tRCD + burst): the path outside the DRAM"),
))
CHANNEL = Columns("dram-channel", "channels[channel * CH_FIELDS + CH_*]", "CH_", "CH_FIELDS",
                  "state of each DRAM channel, float64", (
    Column("BUS_FREE", "cycle", "next free column slot of the channel's bus"),
    Column("WRITES", "writes", "writes buffered since the last drain"),
    Column("QUEUE_HEAD", "entry", "next entry of the channel's scheduler ring"),
    Column("ROW_HITS", "requests", "requests that found their row open"),
    Column("ROW_EMPTY", "requests", "requests that found their bank closed"),
    Column("ROW_CONFLICTS", "requests", "requests that found another row open"),
    Column("DRAIN_END", "cycle", "end of the last write drain booked on the bus"),
    Column("DRAIN_PREV", "cycle", "end of the drain booked before it (writes are accepted once it is over)"),
))
BANK = Columns("dram-bank", "banks[(channel * banks + bank) * BK_FIELDS + BK_*]", "BK_", "BK_FIELDS",
               "state of each DRAM bank, float64", (
    Column("ROW", "row", "open row, -1: closed"),
    Column("ACT", "cycle", "cycle of the bank's last ACT"),
    Column("READY", "cycle", "cycle of the bank's last column command"),
    Column("REFRESH", "refresh", "index of the bank's last refresh, -1: none yet"),
))
QUEUE = Columns("dram-queue", "queue[(channel * depth + entry) * Q_FIELDS + Q_*]", "Q_", "Q_FIELDS",
                "one entry of a channel's scheduler ring (its last requests), float64", (
    Column("BANK", "bank", "bank of the request"),
    Column("ROW", "row", "row of the request"),
    Column("COLUMN", "cycle", "cycle of its column command"),
))

# <state-layout:dram-geometry begin>
G_CHANNELS = 0
G_BANK_GROUPS = 1
G_BANKS_PER_GROUP = 2
G_BURST_BYTES = 3
G_ROW_BURSTS = 4
G_INTERLEAVE_BYTES = 5
G_QUEUE_DEPTH = 6
G_WRITE_BATCH = 7
G_REFRESH_ALL = 8
G_MAP = 9
N_GEOMETRY = 13
# <state-layout:dram-geometry end>

# <state-layout:dram-map-fields begin>
F_COLUMN = 0
F_BANKGROUP = 1
F_BANK = 2
F_ROW = 3
# <state-layout:dram-map-fields end>
MAP_FIELDS = {"column": F_COLUMN, "bankgroup": F_BANKGROUP, "bank": F_BANK, "row": F_ROW}

# <state-layout:dram-timing begin>
T_RCD = 0
T_RP = 1
T_RAS = 2
T_BURST = 3
T_CCD_S = 4
T_CCD_L = 5
T_WTR = 6
T_RTW = 7
T_REFI = 8
T_RFC = 9
T_FIXED = 10
N_TIMING = 11
# <state-layout:dram-timing end>

# <state-layout:dram-channel begin>
CH_BUS_FREE = 0
CH_WRITES = 1
CH_QUEUE_HEAD = 2
CH_ROW_HITS = 3
CH_ROW_EMPTY = 4
CH_ROW_CONFLICTS = 5
CH_DRAIN_END = 6
CH_DRAIN_PREV = 7
CH_FIELDS = 8
# <state-layout:dram-channel end>

# <state-layout:dram-bank begin>
BK_ROW = 0
BK_ACT = 1
BK_READY = 2
BK_REFRESH = 3
BK_FIELDS = 4
# <state-layout:dram-bank end>

# <state-layout:dram-queue begin>
Q_BANK = 0
Q_ROW = 1
Q_COLUMN = 2
Q_FIELDS = 3
# <state-layout:dram-queue end>

ROUNDING_TOLERANCE_CYCLES = 1e-6


def dram_counters(channel_state) -> dict[str, int]:
    """Requests per row-buffer outcome, summed over channels: ``row_hits``, ``row_empty``, ``row_conflicts``."""
    return {"row_hits": int(channel_state[CH_ROW_HITS::CH_FIELDS].sum()),
            "row_empty": int(channel_state[CH_ROW_EMPTY::CH_FIELDS].sum()),
            "row_conflicts": int(channel_state[CH_ROW_CONFLICTS::CH_FIELDS].sum())}


@engine_jit(inline="always")
def dram_channel_of(addr, interleave_bytes, channels):
    """DRAM channel serving an address: XOR-folded ``interleave_bytes`` block index modulo channels."""
    return xor_fold_hash(quotient(addr, interleave_bytes)) % channels


@engine_jit(inline="always")
def dram_decode(addr, geometry):
    """``(channel, bank group, bank within the channel, row)`` of a byte address (see the module docstring)."""
    interleave = geometry[G_INTERLEAVE_BYTES]
    channels = geometry[G_CHANNELS]
    block = quotient(addr, interleave)
    channel = xor_fold_hash(block) % channels
    bursts_per_block = interleave // geometry[G_BURST_BYTES]
    rest = quotient(block, channels)            # the channel-local index of the block
    group = bank = row = np.int64(0)
    for position in range(4):
        code = geometry[G_MAP + position]
        if code == F_COLUMN:
            size = geometry[G_ROW_BURSTS] // bursts_per_block
        elif code == F_BANKGROUP:
            size = geometry[G_BANK_GROUPS]
        elif code == F_BANK:
            size = geometry[G_BANKS_PER_GROUP]
        else:
            row = rest                          # the row is the most significant field: all that is left
            break
        value = rest % size
        rest = rest // size
        if code == F_BANKGROUP:
            group = value
        elif code == F_BANK:
            bank = value
    # permutation-based interleaving: the bank is rotated by the row number, so addresses a row apart (in the
    # same bank and column) fall in different banks and bank groups
    banks = geometry[G_BANK_GROUPS] * geometry[G_BANKS_PER_GROUP]
    rotated = (group * geometry[G_BANKS_PER_GROUP] + bank + row) % banks
    return channel, rotated // geometry[G_BANKS_PER_GROUP], rotated, row


@compiled_only(inline="always")
def _refresh_window(stagger, count, t, timing):
    """``(index, start)`` of the last refresh window of the unit ``stagger`` of ``count`` (a bank of its
    channel, or under all-bank refresh a channel of the DRAM) that began at or before ``t``; index -1: none
    yet (the first one begins ``tREFI * (1 + stagger / count)`` after the launch starts)."""
    refi = timing[T_REFI]
    phase = refi * (1.0 + stagger / count)
    if refi <= 0 or t < phase:
        return -1.0, 0.0
    index = np.floor((t - phase) / refi)
    return index, phase + index * refi


@compiled_only(inline="always")
def _bus_after_refresh(channel, geometry, timing, t):
    """Under all-bank refresh, the channel's bus is idle for its refresh windows: ``t`` moved to the end of
    the window it falls in (per-bank refresh: ``t``)."""
    if geometry[G_REFRESH_ALL] == 0:
        return t
    index, start = _refresh_window(channel, geometry[G_CHANNELS], t, timing)
    if index >= 0 and t < start + timing[T_RFC]:
        return start + timing[T_RFC]
    return t


@compiled_only(inline="always")
def _refresh_check(bank_state, slot, stagger, count, t, timing):
    """Apply refresh to a command wanted at ``t`` (``stagger`` of ``count``: see ``_refresh_window``): returns
    the cycle it may issue (the end of the refresh window when ``t`` falls in one). A refresh since the bank's
    last command closes its row."""
    index, start = _refresh_window(stagger, count, t, timing)
    if index < 0:
        return t
    if index > bank_state[slot + BK_REFRESH]:
        bank_state[slot + BK_REFRESH] = index
        bank_state[slot + BK_ROW] = -1.0
    if t < start + timing[T_RFC]:
        return start + timing[T_RFC]
    return t


@compiled_only(inline="always")
def _queued_row_cycle(queue, base, depth, bank, row, arrival):
    """Column cycle of a request in the channel's window to ``bank``/``row`` still waiting at ``arrival``
    (served after it arrives), or -1: FR-FCFS would serve a request to that row right after it."""
    found = -1.0
    for entry in range(depth):
        at = base + entry * Q_FIELDS
        if queue[at + Q_BANK] == bank and queue[at + Q_ROW] == row and queue[at + Q_COLUMN] > arrival:
            found = max(found, queue[at + Q_COLUMN])
    return found


@compiled_only(inline="always")
def _take_slot(state, index, arrival, period):
    """Take the next slot of a work-conserving column server at or after ``arrival``; return its start."""
    start = max(arrival, state[index])
    state[index] = start + period
    return start


@compiled_only(inline="always")
def _column_ready(channel_state, bank_state, queue, geometry, timing, channel, bank, row, arrival):
    """The cycle bank ``bank`` of ``channel`` can take the column command for ``row``, after any refresh,
    precharge and activation; updates the bank's row state and the channel's row-outcome counters."""
    banks = geometry[G_BANK_GROUPS] * geometry[G_BANKS_PER_GROUP]
    slot = (channel * banks + bank) * BK_FIELDS
    ch = channel * CH_FIELDS
    stagger, count = bank, banks                 # per-bank refresh: the banks of a channel take turns
    if geometry[G_REFRESH_ALL] != 0:
        stagger, count = channel, geometry[G_CHANNELS]     # all-bank: the channels take turns
    if bank_state[slot + BK_ROW] == row:         # open since its ACT + tRCD, unless a refresh closed it
        ready = _refresh_check(bank_state, slot, stagger, count, np.float64(arrival), timing)
        if bank_state[slot + BK_ROW] == row:
            channel_state[ch + CH_ROW_HITS] += 1
            return max(bank_state[slot + BK_ACT] + timing[T_RCD], ready)
    start = max(np.float64(arrival), bank_state[slot + BK_READY])
    start = _refresh_check(bank_state, slot, stagger, count, start, timing)
    depth = geometry[G_QUEUE_DEPTH]
    queued = _queued_row_cycle(queue, channel * depth * Q_FIELDS, depth, bank, row, arrival)
    if queued >= 0:
        channel_state[ch + CH_ROW_HITS] += 1
        return queued
    if bank_state[slot + BK_ROW] >= 0:
        channel_state[ch + CH_ROW_CONFLICTS] += 1
        precharge = max(start, bank_state[slot + BK_ACT] + timing[T_RAS])
        activate = _refresh_check(bank_state, slot, stagger, count, precharge + timing[T_RP], timing)
    else:
        channel_state[ch + CH_ROW_EMPTY] += 1
        activate = start
    bank_state[slot + BK_ROW] = row
    bank_state[slot + BK_ACT] = activate
    return activate + timing[T_RCD]


@compiled_only(inline="always")
def _column(channel_state, bank_state, group_state, queue, geometry, timing, channel, group, bank, row, arrival):
    """The cycle of the column command of an access to ``row`` of ``bank`` (in ``group``) arriving at
    ``arrival``: once its bank is ready (``_column_ready``) and at the channel's and the bank group's next
    column slots; recorded as the bank's last column command."""
    ready = _column_ready(channel_state, bank_state, queue, geometry, timing, channel, bank, row, arrival)
    bus_at = _bus_after_refresh(channel, geometry, timing,
                                max(np.float64(arrival), channel_state[channel * CH_FIELDS + CH_BUS_FREE]))
    bus_slot = _take_slot(channel_state, channel * CH_FIELDS + CH_BUS_FREE, bus_at, timing[T_CCD_S])
    group_slot = _take_slot(group_state, channel * geometry[G_BANK_GROUPS] + group, arrival, timing[T_CCD_L])
    column = max(ready, max(bus_slot, group_slot))
    slot = (channel * geometry[G_BANK_GROUPS] * geometry[G_BANKS_PER_GROUP] + bank) * BK_FIELDS
    bank_state[slot + BK_READY] = max(bank_state[slot + BK_READY], column)
    return column


@compiled_only
def _drain_writes(channel_state, bank_state, group_state, queue, geometry, timing, channel, arrival):
    """Serve the channel's buffered writes (a full batch) back to back: the bus turns to writing (``tRTW``) at
    its next free slot at or after ``arrival``, each write opens its row and takes a column slot as a read
    would, and the bus turns back (``tWTR``) after the last has crossed it. Reads wait for the whole drain."""
    ch = channel * CH_FIELDS
    batch = geometry[G_WRITE_BATCH]
    buffer = geometry[G_CHANNELS] * geometry[G_QUEUE_DEPTH] * Q_FIELDS + channel * batch
    start = max(arrival, channel_state[ch + CH_BUS_FREE]) + timing[T_RTW]
    channel_state[ch + CH_BUS_FREE] = start
    end = start
    for k in range(batch):
        _, group, bank, row = dram_decode(np.int64(queue[buffer + k]), geometry)
        column = _column(channel_state, bank_state, group_state, queue, geometry, timing, channel, group, bank, row,
                         start)
        end = max(end, column + timing[T_BURST])
    channel_state[ch + CH_BUS_FREE] = max(channel_state[ch + CH_BUS_FREE], end) + timing[T_WTR]
    channel_state[ch + CH_DRAIN_PREV] = channel_state[ch + CH_DRAIN_END]
    channel_state[ch + CH_DRAIN_END] = channel_state[ch + CH_BUS_FREE]


@engine_jit
def dram_access(channel_state, bank_state, group_state, queue, geometry, timing, addr, arrival_cycle, is_write):
    """Time one column access (a burst) to ``addr`` arriving at the channel's controller at ``arrival_cycle``.

    A read: returns the instant (float core cycles) its burst has crossed the data bus; the load-to-use
    completion is that plus ``timing[T_FIXED]`` (see ``dram_completion_cycle``). A write is buffered (the
    channel's batch of ``write_batch``; the write completing a batch books the batch's drain on the bus):
    returns the instant the controller accepted it, once the drain before the last booked one is over
    (one batch drains while the next fills)."""
    channel, group, bank, row = dram_decode(addr, geometry)
    ch = channel * CH_FIELDS
    arrival = np.float64(arrival_cycle)
    if is_write:
        batch = geometry[G_WRITE_BATCH]
        count = np.int64(channel_state[ch + CH_WRITES])
        queue[geometry[G_CHANNELS] * geometry[G_QUEUE_DEPTH] * Q_FIELDS + channel * batch + count] = addr
        accepted = max(arrival, channel_state[ch + CH_DRAIN_PREV])
        if count + 1 >= batch:
            channel_state[ch + CH_WRITES] = 0
            _drain_writes(channel_state, bank_state, group_state, queue, geometry, timing, channel, arrival)
        else:
            channel_state[ch + CH_WRITES] = count + 1
        return accepted
    column = _column(channel_state, bank_state, group_state, queue, geometry, timing, channel, group, bank, row,
                     arrival)
    depth = geometry[G_QUEUE_DEPTH]
    head = np.int64(channel_state[ch + CH_QUEUE_HEAD])
    at = (channel * depth + head) * Q_FIELDS
    queue[at + Q_BANK] = bank
    queue[at + Q_ROW] = row
    queue[at + Q_COLUMN] = column
    channel_state[ch + CH_QUEUE_HEAD] = (head + 1) % depth
    return column + timing[T_BURST]


@engine_jit(inline="always")
def dram_completion_cycle(arrival_cycle, bus_done, timing):
    """Whole cycle a read's data is usable: the fixed latency after its burst, rounded up."""
    return max(np.int64(arrival_cycle),
               np.int64(np.ceil(bus_done + timing[T_FIXED] - ROUNDING_TOLERANCE_CYCLES)))
