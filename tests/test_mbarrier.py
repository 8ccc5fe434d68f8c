"""mbarrier, cp.async.bulk (1D), elect.sync and fence.proxy.async (Hopper, issue 25), on the functional and the
timed path. Expected values come from the PTX ISA's description of the mbarrier object (phase, pending arrival
count, expected arrival count, tx-count), modelled independently below, and from numpy; gpusim's layout of the
object's 8 bytes is the one docs/tensor-cores.md documents."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import MbarrierError, PTXSyntaxError, UnsupportedPTXError, WarpSyncError

HERE = Path(__file__).parent / "ptx" / "hopper"
OPS = {"init": 0, "arrive": 1, "arrive_n": 2, "arrive_tx": 3, "expect_tx": 4, "complete_tx": 5, "drop": 6,
       "test": 7, "try_parity": 8, "test_parity": 9, "pending": 10, "inval": 11, "try_hint": 12, "arrive_sink": 13}


def decode(word: int) -> tuple[int, int, int, int, int]:
    """(valid, phase, pending, expected, tx) of an mbarrier word, in the layout docs/tensor-cores.md gives."""
    tx = (word >> 40) & ((1 << 21) - 1)
    if tx >= 1 << 20:
        tx -= 1 << 21
    return (word >> 62) & 1, word >> 63, word & 0xFFFFF, (word >> 20) & 0xFFFFF, tx


class Reference:
    """The mbarrier object as the PTX ISA describes it (section "Parallel Synchronization ... mbarrier")."""

    def __init__(self):
        self.valid, self.phase, self.pending, self.expected, self.tx = 0, 0, 0, 0, 0
        self.token = (0, 0)          # the kernel's state register starts at 0

    def state(self) -> tuple[int, int, int, int, int]:
        if not self.valid:
            return 0, 0, 0, 0, 0
        return 1, self.phase, self.pending, self.expected, self.tx

    def _settle(self):
        if self.pending == 0 and self.tx == 0:          # the current phase completes
            self.phase ^= 1
            self.pending = self.expected
            self.tx = 0

    def run(self, op: str, value: int) -> int | None:
        """Apply one op; returns what the kernel stores as its result (None: not checked)."""
        if op == "init":
            self.valid, self.phase, self.pending, self.expected, self.tx = 1, 0, value, value, 0
            return 0
        if op == "inval":
            token = self.token
            self.__init__()
            self.token = token
            return 0
        if op in ("arrive", "arrive_n", "arrive_tx", "drop", "arrive_sink"):
            count = value if op in ("arrive_n", "arrive_sink") else 1
            if op == "arrive_tx":
                self.tx += value
            if op == "drop":
                self.expected -= 1
            self.pending -= count
            if op != "arrive_sink":       # the sink form returns no state: the kernel's token stays
                self.token = (self.phase, self.pending)    # the phase arrived on; pending after the arrival
            self._settle()
            return None if op == "arrive_sink" else -1
        if op in ("expect_tx", "complete_tx"):
            self.tx += value if op == "expect_tx" else -value
            self._settle()
            return 0
        if op in ("test", "try_hint"):
            return int(self.token[0] != self.phase)
        if op in ("try_parity", "test_parity"):
            return int((value & 1) != self.phase)
        if op == "pending":
            return self.token[1]
        raise ValueError(op)


def random_program(rng, length: int) -> list[tuple[str, int]]:
    """A program of defined operations only (no arrival past the pending count, tx-count in range)."""
    ref = Reference()
    program = [("init", int(rng.integers(1, 6)))]
    ref.run(*program[0])
    for _ in range(length):
        choices = ["test", "try_parity", "test_parity", "try_hint", "expect_tx"]
        if ref.pending >= 1:
            choices += ["arrive", "arrive", "arrive_tx"]
            if ref.expected >= 2:
                choices.append("drop")
        if ref.pending >= 2:
            choices += ["arrive_n", "arrive_sink"]
        if ref.tx > 0:
            choices += ["complete_tx", "complete_tx"]
        op = str(rng.choice(choices))
        value = 0
        if op in ("arrive_n", "arrive_sink"):
            value = int(rng.integers(1, ref.pending + 1))
        elif op in ("arrive_tx", "expect_tx"):
            value = int(rng.integers(1, 4096)) * 16
        elif op == "complete_tx":
            value = int(rng.integers(1, ref.tx + 1))
        elif op in ("try_parity", "test_parity"):
            value = int(rng.integers(0, 2))
        if op == "arrive_tx" and ref.tx + value >= 1 << 20 or op == "expect_tx" and ref.tx + value >= 1 << 20:
            continue
        program.append((op, value))
        if op in ("arrive", "arrive_n", "arrive_tx", "drop"):
            program.append(("pending", 0))
        ref.run(op, value)
    return program


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("h100-sxm", sms=1)


@pytest.fixture(scope="module")
def mod(gpu):
    return gpu.load(HERE / "mbarrier.ptx")


def run_program(gpu, mod, program, timing):
    ops = np.array([(OPS[op], value) for op, value in program], dtype=np.uint32).ravel()
    out = gpu.zeros(2 * len(program), np.uint64)
    gpu.launch(mod["mbar_program"], grid=1, block=32, args=[gpu.to_device(ops), np.uint32(len(program)), out],
               timing=timing)
    return out.get().reshape(-1, 2)


def check_program(program, got):
    ref = Reference()
    for i, (op, value) in enumerate(program):
        want = ref.run(op, value)
        result, word = (int(x) for x in got[i])
        assert decode(word) == ref.state(), (i, op, value, decode(word), ref.state())
        if want == -1:          # a state token: the phase it arrived on, the pending count after the arrival
            assert result >> 63 == ref.token[0] and result & 0xFFFFF == ref.token[1], (i, op)
        elif want is not None and op not in ("init", "inval", "expect_tx", "complete_tx"):
            assert result == want, (i, op, value, result, want)


@pytest.mark.parametrize("timing", [False, True])
def test_phase_completes_after_expected_arrivals_and_tx_bytes(gpu, mod, timing):
    program = [("init", 3), ("arrive", 0), ("pending", 0), ("test", 0), ("expect_tx", 64), ("arrive_n", 2),
               ("test", 0), ("test_parity", 0), ("complete_tx", 48), ("test_parity", 0), ("complete_tx", 16),
               ("test", 0), ("test_parity", 0), ("test_parity", 1), ("arrive_tx", 32), ("arrive_sink", 2),
               ("try_parity", 1), ("complete_tx", 32), ("try_parity", 1), ("try_hint", 0), ("drop", 0),
               ("arrive", 0), ("arrive", 0), ("inval", 0)]
    got = run_program(gpu, mod, program, timing)
    check_program(program, got)
    # spelled out from the ISA, independently of the reference model
    assert decode(int(got[0, 1])) == (1, 0, 3, 3, 0)           # init(3): phase 0, 3 pending, 3 expected
    assert int(got[2, 0]) == 2                                   # pending_count after one arrival
    assert int(got[6, 0]) == 0 and int(got[7, 0]) == 0           # all arrivals in, 64 bytes outstanding
    assert int(got[9, 0]) == 0 and int(got[11, 0]) == 1          # completes with the last 16 bytes
    assert decode(int(got[10, 1]))[1:] == (1, 3, 3, 0)           # phase 1, pending reloaded
    assert int(got[12, 0]) == 1 and int(got[13, 0]) == 0         # parity 0 done, parity 1 (current) not
    assert decode(int(got[20, 1]))[3] == 2                       # arrive_drop: 2 expected from now on
    assert decode(int(got[-1, 1])) == (0, 0, 0, 0, 0)            # inval


@pytest.mark.parametrize("seed", range(3))
def test_random_programs_match_the_isa_model_on_both_paths(gpu, mod, seed):
    program = random_program(np.random.default_rng(seed), 60)
    functional = run_program(gpu, mod, program, False)
    check_program(program, functional)
    assert np.array_equal(functional, run_program(gpu, mod, program, True))


@pytest.mark.parametrize("threads", [32, 96, 200])
@pytest.mark.parametrize("timing", [False, True])
def test_every_thread_arrives_and_the_phase_flips_once(gpu, mod, threads, timing):
    out = gpu.zeros(2 * threads, np.uint64)
    gpu.launch(mod["mbar_all_arrive"], grid=2, block=threads, args=[out], timing=timing)
    got = out.get().reshape(-1, 2)
    tokens, words = got[:, 0].astype(np.uint64), got[:, 1]
    assert all(decode(int(w)) == (1, 1, threads, threads, 0) for w in words)
    assert np.all(tokens >> np.uint64(63) == 0)                   # every arrival was on phase 0
    # the arrivals are ordered: the pending counts after them are threads-1 .. 0, each once
    assert sorted(int(t) & 0xFFFFF for t in tokens) == list(range(threads))


@pytest.mark.parametrize("nbytes", [16, 1024, 16384])
def test_bulk_copy_round_trip_on_both_paths(gpu, mod, nbytes):
    rng = np.random.default_rng(nbytes)
    data = rng.integers(0, 2**32, nbytes // 4, dtype=np.uint32)
    results = {}
    for timing in (False, True):
        src = gpu.to_device(data)
        out, out2, info = gpu.zeros(nbytes // 4, np.uint32), gpu.zeros(nbytes // 4, np.uint32), gpu.zeros(2, np.uint32)
        run = gpu.launch(mod["bulk_roundtrip"], grid=1, block=128, args=[src, out, out2, np.uint32(nbytes), info],
                         timing=timing, cache_control="all")
        assert np.array_equal(out.get(), data) and np.array_equal(out2.get(), data)
        results[timing] = (info.get(), run)
    done_at_once, polls = results[False][0]
    assert done_at_once == 1 and polls == 0                       # functional: the bytes complete at issue
    done_at_once, polls = results[True][0]
    assert done_at_once == 0 and polls > 0                        # timed: the copy is in flight, the wait spins
    run = results[True][1]
    # the copy's bytes went through the memory system: every source byte read from DRAM (cold caches)
    assert run.metrics["dram__bytes_read.sum"] >= nbytes
    # a DRAM miss takes longer than an L2 hit: the wait spun at least that long
    assert run.cycles > gpu.config.l2_latency_cycles


def test_bulk_copy_takes_longer_for_more_bytes(gpu, mod):
    cycles = []
    for nbytes in (1024, 16384):
        data = np.arange(nbytes // 4, dtype=np.uint32)
        info = gpu.zeros(2, np.uint32)
        run = gpu.launch(mod["bulk_roundtrip"], grid=1, block=128, cache_control="all",
                         args=[gpu.to_device(data), gpu.zeros(nbytes // 4, np.uint32),
                               gpu.zeros(nbytes // 4, np.uint32), np.uint32(nbytes), info])
        cycles.append((run.cycles, int(info.get()[1])))
    assert cycles[1][0] > cycles[0][0] and cycles[1][1] > cycles[0][1]


@pytest.mark.parametrize("mask,threads", [(0xFFFFFFFF, 32), (0xFFFF0000, 32), (0x00F0F000, 32), (0x80000000, 32),
                                          (0x000FFFFF, 20), (0xFFFFFFFF, 20)])
@pytest.mark.parametrize("timing", [False, True])
def test_elect_sync_picks_the_lowest_member_lane(gpu, mod, mask, threads, timing):
    out = gpu.zeros(2 * threads, np.uint32)
    gpu.launch(mod["elect_lanes"], grid=1, block=threads, args=[np.uint32(mask), out], timing=timing)
    got = out.get().reshape(-1, 2)
    live = mask & ((1 << threads) - 1)
    leader = (live & -live).bit_length() - 1
    for lane in range(threads):
        if (mask >> lane) & 1:
            assert got[lane, 0] == leader and got[lane, 1] == int(lane == leader), lane
        else:
            assert tuple(got[lane]) == (99, 7)


@pytest.mark.parametrize("which,n,rule", [(0, 16, "uninitialised"), (1, 16, "arrivals"), (2, 24, "size"),
                                          (3, 64, "alignment"), (4, 0, "init count")])
@pytest.mark.parametrize("timing", [False, True])
def test_undefined_operations_are_errors_naming_the_line(gpu, mod, which, n, rule, timing):
    src = gpu.to_device(np.zeros(64, np.uint32))
    with pytest.raises(MbarrierError) as info:
        gpu.launch(mod["mbar_misuse"], grid=1, block=32, args=[np.uint32(which), src, np.uint32(n)], timing=timing)
    assert info.value.rule == rule
    assert "mbarrier.ptx:" in str(info.value) and info.value.line > 0


def test_elect_outside_its_mask_is_a_warp_sync_error(gpu, tmp_path):
    text = (HERE / "mbarrier.ptx").read_text().replace("elect.sync \t%r3|%p2, %r1;", "elect.sync \t%r3|%p2, 1;")
    path = tmp_path / "elect_bad.ptx"
    path.write_text(text)
    kernel = gpu.load(path)["elect_lanes"]
    with pytest.raises(WarpSyncError):
        gpu.launch(kernel, grid=1, block=32, args=[np.uint32(0xFFFFFFFF), gpu.zeros(64, np.uint32)])


PTX_HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n" \
           ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.shared .align 128 .b8 t[256];\n.shared .align 8 .b64 bar;\n" \
           "ld.param.u64 %rd1, [p];\nmov.u32 %r1, t;\nmov.u32 %r2, bar;\n"


@pytest.mark.parametrize("line,error", [
    ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 24, [%r2];", PTXSyntaxError),
    ("cp.async.bulk.prefetch.L1.global [%rd1], 64;", UnsupportedPTXError),
    ("cp.async.bulk.global.shared::cta.bulk_group [%rd1], [t+8], 32;", PTXSyntaxError),
    ("mbarrier.arrive.foo.shared.b64 %rd2, [%r2];", UnsupportedPTXError),
    ("elect.any %r3, 1;", UnsupportedPTXError),
])
def test_malformed_forms_are_refused_at_load_naming_the_line(gpu, tmp_path, line, error):
    path = tmp_path / "bad.ptx"
    path.write_text(PTX_HEAD + line + "\nret;\n}\n")
    with pytest.raises(error) as info:
        gpu.load(path)["k"]
    assert "bad.ptx:13" in str(info.value)


def test_fences_parse_and_order_only(gpu, tmp_path):
    path = tmp_path / "fences.ptx"
    path.write_text(PTX_HEAD + "fence.proxy.async.shared::cta;\nfence.proxy.async;\n"
                    "fence.mbarrier_init.release.cluster;\nst.global.u32 [%rd1], 5;\nret;\n}\n")
    out = gpu.zeros(1, np.uint32)
    gpu.launch(gpu.load(path)["k"], grid=1, block=32, args=[out])
    assert out.get()[0] == 5


def test_bulk_copy_and_elect_refused_on_gpus_before_hopper(mod):
    a100 = gpusim.GPU("a100", sms=1)
    kernel = a100.load(HERE / "mbarrier.ptx")
    with pytest.raises(UnsupportedPTXError, match="not available on a100"):
        a100.launch(kernel["elect_lanes"], grid=1, block=32, args=[np.uint32(1), a100.zeros(64, np.uint32)])
    with pytest.raises(UnsupportedPTXError, match="cp.async.bulk.* not available on a100"):
        a100.launch(kernel["bulk_roundtrip"], grid=1, block=32, args=[a100.zeros(4, np.uint32)] * 3
                    + [np.uint32(16), a100.zeros(2, np.uint32)])
    program = [("init", 2), ("arrive", 0), ("test", 0)]          # mbarrier itself exists since sm_80
    check_program(program, run_program(a100, kernel, program, False))


@pytest.mark.parametrize("sms", [1, 8])
def test_bulk_copy_moves_its_bytes_like_cp_async(mod, sms):
    """A bulk copy's bytes take the memory path cp.async.cg's take: the same DRAM bytes, and the wait ends at
    most a few polls of the try_wait loop (each an mbarrier operation: a shared atomic, then a branch) after
    128 threads' cp.async of the same bytes would have it."""
    gpu = gpusim.GPU("h100-sxm", sms=sms)
    kernels = gpu.load(HERE / "mbarrier.ptx")
    config = gpu.config
    for nbytes in (1024, 16384):
        got = {}
        for name in ("time_cp_async", "time_bulk"):
            t = gpu.zeros(1, np.int64)
            run = gpu.launch(kernels[name], grid=1, block=128, cache_control="all",
                             args=[gpu.to_device(np.arange(nbytes // 4, dtype=np.uint32)), np.uint32(nbytes), t])
            got[name] = (int(t.get()[0]), run.metrics["dram__bytes_read.sum"])
        assert got["time_bulk"][1] == got["time_cp_async"][1] == nbytes
        poll = config.atomic_shared_latency_cycles + config.branch_latency_cycles
        assert got["time_cp_async"][0] - poll <= got["time_bulk"][0] <= got["time_cp_async"][0] + 3 * poll, got


def test_cutlass_style_wait_and_cache_hints(gpu, tmp_path):
    """CUTLASS's forms: a try_wait.parity loop with labels inside an inline-asm scope and a suspend-time hint,
    arrive.expect_tx into the sink, bulk copies with an L2 cache-policy operand (accepted, no effect)."""
    path = tmp_path / "cutlass.ptx"
    path.write_text(PTX_HEAD + """mov.u32 %r3, 0;
mov.b64 %rd2, 0;
mbarrier.init.shared::cta.b64 [%r2], 32;
mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 8;
cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%rd1], 256, [%r2], %rd2;
{
.reg .pred P1;
LAB_WAIT:
mbarrier.try_wait.parity.shared::cta.b64 P1, [%r2], %r3, 10000000;
@P1 bra DONE;
bra LAB_WAIT;
DONE:
}
cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%rd1+256], [%r1], 256, %rd2;
cp.async.bulk.commit_group;
cp.async.bulk.wait_group 0;
ret;
}
""")
    kernel = gpu.load(path)["k"]
    for timing in (False, True):
        data = gpu.to_device(np.arange(128, dtype=np.uint32))
        gpu.launch(kernel, grid=1, block=32, args=[data], timing=timing)
        got = data.get()
        # 32 lanes expect 8 bytes each (256 in all): the first 256-byte copy completes the phase; every lane
        # copies the same 256 bytes into t and stores them to the second half
        assert np.array_equal(got[64:], np.arange(64, dtype=np.uint32))
