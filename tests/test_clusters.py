"""Thread-block clusters and distributed shared memory (docs/kernels.md, "Clusters").

Kernels: tests/data/hopper/clusters.cu (nvcc -ptx -O3 -arch=sm_90a, tests/data/hopper/regenerate.sh). Expected
values come from the PTX ISA's definitions of the cluster registers, numpy, and the config's DSM figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpusim import GPU
from gpusim.errors import ClusterAccessError, ClusterError, LaunchError

PTX = Path(__file__).parent / "data" / "hopper" / "clusters.ptx"


@pytest.fixture(scope="module")
def gpu():
    return GPU("h100-sxm")


@pytest.fixture(scope="module")
def mod(gpu):
    return gpu.load(PTX)


def _expected_ids(grid, cluster, explicit=1):
    """The 11 registers cluster_ids writes, per block (linear index, x fastest), from the PTX ISA's definitions."""
    gx, gy, gz = grid
    cx, cy, cz = cluster
    rows = []
    for bz in range(gz):
        for by in range(gy):
            for bx in range(gx):
                rank = bx % cx + cx * (by % cy + cy * (bz % cz))
                rows.append([bx // cx, by // cy, gx // cx, gy // cy, bx % cx, by % cy, cx, cy, rank,
                             cx * cy * cz, explicit])
    return np.array(rows, dtype=np.uint32)


@pytest.mark.parametrize("timing", [False, True])
@pytest.mark.parametrize("grid, cluster", [((4, 2, 1), (2, 2, 1)), ((6, 2, 2), (3, 1, 2)), ((8, 1, 1), (8, 1, 1))])
def test_special_registers_follow_the_cluster_shape(gpu, mod, grid, cluster, timing):
    blocks = grid[0] * grid[1] * grid[2]
    out = gpu.zeros(blocks * 32 * 11, np.uint32)
    gpu.launch(mod["cluster_ids"], grid[:2] if grid[2] == 1 else grid, (32,), [out], cluster=cluster, timing=timing)
    got = out.to_host().reshape(blocks, 32, 11)
    want = _expected_ids(grid, cluster)
    for t in (0, 31):
        np.testing.assert_array_equal(got[:, t], want)


def test_without_a_cluster_launch_each_block_is_a_1x1x1_cluster(gpu, mod):
    out = gpu.zeros(6 * 32 * 11, np.uint32)
    gpu.launch(mod["cluster_ids"], (3, 2), (32,), [out], timing=False)
    np.testing.assert_array_equal(out.to_host().reshape(6, 32, 11)[:, 0], _expected_ids((3, 2, 1), (1, 1, 1), 0))


@pytest.mark.parametrize("size", [2, 4, 16])
def test_placement_one_gpc_all_at_once(gpu, mod, size):
    config = gpu.config
    n = 4 * size
    smid, start, end = gpu.zeros(n, np.uint32), gpu.zeros(n, np.int64), gpu.zeros(n, np.int64)
    gpu.launch(mod["cluster_where"], (n,), (64,), [smid, start, end], cluster=(size, 1, 1),
               cluster_nonportable=size > config.max_cluster_blocks)
    sms, t0, t1 = smid.to_host(), start.to_host(), end.to_host()
    for q in range(n // size):
        members = slice(q * size, (q + 1) * size)
        gpcs = set(int(s) // config.gpc_sms for s in sms[members])
        assert len(gpcs) == 1, f"cluster {q} spans GPCs {gpcs}"
        assert int(sms[members].max()) < (config.sms // config.gpc_sms) * config.gpc_sms
        # resident together: every block started before any block of the cluster passed the cluster barrier
        assert t0[members].max() <= t1[members].min()


@pytest.mark.parametrize("timing", [False, True])
def test_dsm_reduce_matches_numpy(gpu, mod, timing):
    rng = np.random.default_rng(5)
    values = rng.standard_normal(8 * 128).astype(np.float32)
    din, dout = gpu.to_device(values), gpu.zeros(2 * 128, np.float32)
    gpu.launch(mod["dsm_reduce"], (8,), (128,), [din, dout], cluster=(4, 1, 1), timing=timing)
    want = (values * 2).reshape(2, 4, 128).sum(axis=1).ravel()
    np.testing.assert_allclose(dout.to_host(), want, rtol=1e-5)


@pytest.mark.parametrize("timing", [False, True])
def test_dsm_ring_stores_and_remote_atomics(gpu, mod, timing):
    n, clusters, threads = 4, 3, 64
    out = gpu.zeros(n * clusters * threads + clusters, np.uint32)
    gpu.launch(mod["dsm_ring"], (n * clusters,), (threads,), [out], cluster=(n, 1, 1), timing=timing)
    got = out.to_host()
    boxes = got[:n * clusters * threads].reshape(n * clusters, threads)
    for block in range(n * clusters):
        rank = block % n
        np.testing.assert_array_equal(boxes[block], ((rank - 1) % n) * 1000 + np.arange(threads))
    # every thread of every rank added rank + 1 to rank 0's counter
    np.testing.assert_array_equal(got[n * clusters * threads:], threads * sum(range(1, n + 1)))


@pytest.mark.parametrize("timing", [False, True])
def test_barrier_cluster_orders_a_remote_store(gpu, mod, timing):
    out = gpu.zeros(3, np.uint32)
    gpu.launch(mod["cluster_order"], (6,), (64,), [out], cluster=(2, 1, 1), timing=timing)
    np.testing.assert_array_equal(out.to_host(), 77)


@pytest.mark.parametrize("timing", [False, True])
def test_remote_mbarrier_arrive(gpu, mod, timing):
    n = 4
    out = gpu.zeros(2, np.uint32)
    gpu.launch(mod["remote_mbarrier"], (2 * n,), (32,), [out], cluster=(n, 1, 1), timing=timing)
    np.testing.assert_array_equal(out.to_host(), sum(10 * r for r in range(1, n)))


def test_timed_and_functional_results_identical(gpu, mod):
    values = np.arange(16 * 128, dtype=np.float32) % 7
    results = []
    for timing in (False, True):
        din, dout = gpu.to_device(values), gpu.zeros(2 * 128, np.float32)
        ring = gpu.zeros(16 * 32 + 4, np.uint32)
        gpu.launch(mod["dsm_reduce"], (16,), (128,), [din, dout], cluster=(8, 1, 1), timing=timing)
        gpu.launch(mod["dsm_ring"], (16,), (32,), [ring], cluster=(4, 1, 1), timing=timing)
        results.append((dout.to_host(), ring.to_host()))
    for a, b in zip(results[0], results[1], strict=True):
        np.testing.assert_array_equal(a, b)


def test_reqnctapercluster_runs_as_clusters(gpu, mod):
    out = gpu.zeros(4, np.uint32)
    gpu.launch(mod["fixed_cluster"], (4,), (32,), [out])
    np.testing.assert_array_equal(out.to_host(), 2)
    gpu.launch(mod["fixed_cluster"], (4,), (32,), [out], cluster=(2, 1, 1))     # the same shape: fine
    with pytest.raises(ClusterError, match="reqnctapercluster"):
        gpu.launch(mod["fixed_cluster"], (4,), (32,), [out], cluster=(4, 1, 1))
    with pytest.raises(ClusterError, match="multiple of cluster.x"):
        gpu.launch(mod["fixed_cluster"], (3,), (32,), [out])


@pytest.mark.parametrize("kwargs, match", [
    (dict(grid=(6,), cluster=(4, 1, 1)), "not a multiple of cluster.x"),
    (dict(grid=(16,), cluster=(16, 1, 1)), "portable maximum 8"),
    (dict(grid=(32,), cluster=(32, 1, 1), cluster_nonportable=True), "non-portable maximum 16"),
    (dict(grid=(4,), cluster=(0, 1, 1)), "positive ints"),
    (dict(grid=(4,), cluster=(2, 1, 1), cluster_nonportable="yes"), "True or False"),
    (dict(grid=(4,), cluster_nonportable=True), "needs a cluster launch"),
])
def test_launch_rules(gpu, mod, kwargs, match):
    grid = kwargs.pop("grid")
    with pytest.raises(ClusterError, match=match):
        gpu.launch(mod["cluster_ids"], grid, (32,), [gpu.zeros(64 * 32 * 11, np.uint32)], **kwargs)


def test_cluster_errors_are_launch_errors():
    assert issubclass(ClusterError, LaunchError)
    assert issubclass(ClusterAccessError, ClusterError)


def test_pre_hopper_refuses_clusters():
    old = GPU("a100")
    module = old.load(PTX)
    with pytest.raises(ClusterError, match="compute capability 9.0"):
        old.launch(module["cluster_ids"], (2,), (32,), [old.zeros(2 * 32 * 11, np.uint32)], cluster=(2, 1, 1))


def test_cluster_larger_than_a_gpc_can_never_fit():
    small = GPU("h100-sxm", sms=8)
    module = small.load(PTX)
    with pytest.raises(ClusterError, match="never be resident"):
        small.launch(module["cluster_ids"], (16,), (32,), [small.zeros(16 * 32 * 11, np.uint32)],
                     cluster=(16, 1, 1), cluster_nonportable=True)


@pytest.mark.parametrize("timing", [False, True])
def test_rank_past_the_cluster_is_an_error(gpu, mod, timing):
    with pytest.raises(ClusterAccessError, match="rank 2 of a cluster of 2") as info:
        gpu.launch(mod["bad_rank"], (2,), (32,), [gpu.zeros(2, np.uint32), 2], cluster=(2, 1, 1), timing=timing)
    assert info.value.line > 0


@pytest.mark.parametrize("timing", [False, True])
def test_access_to_an_exited_cta_is_an_error(gpu, mod, timing):
    with pytest.raises(ClusterAccessError, match="already exited") as info:
        gpu.launch(mod["after_exit"], (2,), (32,), [gpu.zeros(2, np.uint32)], cluster=(2, 1, 1), timing=timing)
    assert info.value.line > 0


def test_dsm_latency_within_the_configs_band(gpu, mod):
    """64 dependent loads from rank 1's shared memory: each costs the config's round trip plus one 4-byte
    transfer at the network rate, plus the loop's own instructions (bounded by 64 cycles per step here)."""
    config = gpu.config
    chain = ((np.arange(256) * 37 + 11) % 256).astype(np.uint32)
    cycles, sink = gpu.zeros(1, np.int64), gpu.zeros(1, np.uint32)
    gpu.launch(mod["dsm_latency"], (2,), (32,), [gpu.to_device(chain), cycles, sink], cluster=(2, 1, 1))
    per_load = int(cycles.to_host()[0]) / 64
    floor = config.dsm_round_trip_cycles + 4 / config.dsm_bytes_per_cycle_per_sm
    assert floor <= per_load <= floor + 64, per_load
    j = 0
    for _ in range(64):
        j = int(chain[j])
    assert int(sink.to_host()[0]) == j


def test_cluster_sync_costs_the_configs_barrier_latency(gpu, mod):
    """cluster_where reads %clock64 before and after cluster.sync(): the wait is released no sooner than
    cluster_barrier_latency_cycles after it issues, and (every block arriving at once) within one more poll."""
    latency = gpu.config.cluster_barrier_latency_cycles
    n = 8
    smid, start, end = gpu.zeros(n, np.uint32), gpu.zeros(n, np.int64), gpu.zeros(n, np.int64)
    gpu.launch(mod["cluster_where"], (n,), (64,), [smid, start, end], cluster=(2, 1, 1))
    spent = end.to_host() - start.to_host()
    assert (spent >= latency).all() and (spent <= 2 * latency + 100).all(), spent


@pytest.mark.parametrize("timing", [False, True])
def test_dsm_bulk_copy_completes_on_the_receivers_mbarrier(gpu, mod, timing):
    n, clusters = 4, 2
    values = np.arange(n * clusters * 64, dtype=np.uint32) * 3 + 1
    out = gpu.zeros(values.size, np.uint32)
    gpu.launch(mod["dsm_bulk"], (n * clusters,), (64,), [gpu.to_device(values), out], cluster=(n, 1, 1),
               timing=timing)
    sent = values.reshape(clusters, n, 64)
    want = np.roll(sent, 1, axis=1).ravel()          # rank r received rank r - 1's words
    np.testing.assert_array_equal(out.to_host(), want)


_DIRECTIVES_PTX = """
.version 8.0
.target sm_90a
.address_size 64
.shared .align 4 .b32 word;
.visible .entry cluster_ld(.param .u64 p)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %cluster_ctarank;
  mov.u32 %r2, word;
  add.u32 %r3, %r1, 100;
  st.shared.u32 [%r2], %r3;
  fence.acq_rel.cluster;
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  xor.b32 %r4, %r1, 1;
  mapa.shared::cluster.u32 %r5, %r2, %r4;
  ld.shared::cluster.u32 %r6, [%r5];
  cvt.u64.u32 %rd2, %r5;
  cvta.shared::cluster.u64 %rd3, %rd2;
  ld.u32 %r7, [%rd3];
  mul.wide.u32 %rd4, %r1, 8;
  add.u64 %rd5, %rd1, %rd4;
  st.global.u32 [%rd5], %r6;
  st.global.u32 [%rd5+4], %r7;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ret;
}
.visible .entry explicit_only(.param .u64 p)
.explicitcluster
{
  ret;
}
.visible .entry rank_limited(.param .u64 p)
.maxclusterrank 2
{
  ret;
}
.visible .entry mapa_global(.param .u64 p)
{
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  mapa.u64 %rd2, %rd1, 0;
  st.global.u64 [%rd1], %rd2;
  ret;
}
.visible .entry multicast(.param .u64 p)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .reg .b16 %rs<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 0;
  mov.u16 %rs1, 2;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1], 16, [%r1], %rs1;
  ret;
}
"""


def test_kernel_cluster_directives(gpu):
    module = gpu.load_ptx(_DIRECTIVES_PTX, "directives.ptx")
    buf = gpu.zeros(4, np.uint64)
    with pytest.raises(ClusterError, match="explicitcluster"):
        gpu.launch(module["explicit_only"], (2,), (32,), [buf])
    gpu.launch(module["explicit_only"], (2,), (32,), [buf], cluster=(2, 1, 1))
    gpu.launch(module["rank_limited"], (4,), (32,), [buf], cluster=(2, 1, 1))
    with pytest.raises(ClusterError, match="maxclusterrank 2"):
        gpu.launch(module["rank_limited"], (4,), (32,), [buf], cluster=(4, 1, 1))


def test_mapa_of_a_non_shared_address_is_an_error(gpu):
    module = gpu.load_ptx(_DIRECTIVES_PTX, "directives.ptx")
    with pytest.raises(ClusterAccessError, match="not a shared-memory address"):
        gpu.launch(module["mapa_global"], (2,), (32,), [gpu.zeros(4, np.uint64)], cluster=(2, 1, 1),
                   timing=False)


@pytest.mark.parametrize("timing", [False, True])
def test_multicast_bulk_copy_reaches_the_masked_ranks(gpu, mod, timing):
    n, clusters = 4, 2
    values = (np.arange(clusters * 64, dtype=np.uint32) * 7 + 5)
    out = gpu.zeros(n * clusters * 64, np.uint32)
    gpu.launch(mod["multicast_load"], (n * clusters,), (64,), [gpu.to_device(values), out], cluster=(n, 1, 1),
               timing=timing)
    got = out.to_host().reshape(clusters, n, 64)
    for q in range(clusters):
        for rank in range(n):
            want = values[q * 64:(q + 1) * 64] if (0xB >> rank) & 1 else np.full(64, 0xFFFFFFFF, np.uint32)
            np.testing.assert_array_equal(got[q, rank], want)


def test_multicast_to_a_rank_past_the_cluster_is_an_error(gpu):
    module = gpu.load_ptx(_DIRECTIVES_PTX, "directives.ptx")
    with pytest.raises(ClusterAccessError, match="rank 1 of a cluster of 1"):
        gpu.launch(module["multicast"], (2,), (32,), [gpu.zeros(4, np.uint64)], 64, timing=False)


@pytest.mark.parametrize("timing", [False, True])
def test_shared_cluster_load_and_generic_window(gpu, timing):
    """ld.shared::cluster of a mapa address and a generic load of its cvta.shared::cluster form read the
    partner rank's word (rank ^ 1 wrote rank + 100)."""
    module = gpu.load_ptx(_DIRECTIVES_PTX, "directives.ptx")
    out = gpu.zeros(2 * 2, np.uint32)
    gpu.launch(module["cluster_ld"], (2,), (1,), [out], cluster=(2, 1, 1), timing=timing)
    np.testing.assert_array_equal(out.to_host().reshape(2, 2), [[101, 101], [100, 100]])


def test_sampled_simulation_runs_cluster_launches_in_full():
    """GPU(sampling="auto") runs a cluster launch in full, says why, and times it as an unsampled GPU does."""
    runs, outs = [], []
    for sampling in ("auto", "off"):
        gpu = GPU("h100-sxm", sampling=sampling)
        module = gpu.load(PTX)
        out = gpu.zeros(2 * 32 * 11, np.uint32)
        runs.append(gpu.launch(module["cluster_ids"], (2,), (32,), [out], cluster=(2, 1, 1)))
        outs.append(out.to_host())
    sampled, plain = runs
    assert not sampled.sampled and "cluster" in sampled.sampling.reason
    assert sampled.cycles_interval == (plain.cycles, plain.cycles) and sampled.cycles == plain.cycles
    np.testing.assert_array_equal(outs[0], outs[1])


def test_dsm_throughput_bounded_by_the_port(gpu, mod):
    """Rank 0 reads 64 KiB from rank 1: no faster than dsm_bytes_per_cycle_per_sm (the SM's DSM port) plus
    the round trip, and within 2x of that bound (the loads overlap)."""
    config = gpu.config
    cycles, sink = gpu.zeros(1, np.int64), gpu.zeros(2 * 1024, np.uint32)
    gpu.launch(mod["dsm_stream"], (2,), (1024,), [cycles, sink], cluster=(2, 1, 1))
    spent = int(cycles.to_host()[0])
    floor = 1024 * 16 * 4 / config.dsm_bytes_per_cycle_per_sm + config.dsm_round_trip_cycles
    assert floor <= spent <= 2 * floor, (spent, floor)
    want = ((np.arange(1024)[:, None] + 32 * np.arange(16)[None, :]) % 1024).sum(axis=1)
    np.testing.assert_array_equal(sink.to_host()[:1024], want)


@pytest.mark.parametrize("timing", [False, True])
def test_getctarank_names_the_cta_an_address_belongs_to(gpu, timing):
    """tests/data/hopper/cluster_rank.cu (nvcc 13, cooperative_groups): cluster.query_shared_rank (getctarank.u64
    on a generic address) of the peer's variable that cluster.map_shared_rank (mapa) gave is the peer's rank,
    (r + 1) mod 4; of the CTA's own variable, its own rank r (PTX ISA, getctarank)."""
    module = gpu.load(PTX.with_name("cluster_rank.ptx"))
    out = gpu.zeros(8 * 3, np.uint32)
    gpu.launch(module["_Z7rank_ofPj"], (8,), (32,), [out], cluster=(4, 1, 1), timing=timing)
    got = out.to_host().reshape(8, 3)
    ranks = np.arange(8) % 4
    np.testing.assert_array_equal(got[:, 2], ranks)
    np.testing.assert_array_equal(got[:, 0], (ranks + 1) % 4)
    np.testing.assert_array_equal(got[:, 1], ranks)


def test_getctarank_of_a_global_address_is_an_error(gpu):
    """getctarank of a generic address outside the shared window (a global pointer) is the ISA's undefined case:
    a ClusterAccessError, as mapa's."""
    text = _DIRECTIVES_PTX.replace("  mapa.u64 %rd2, %rd1, 0;\n  st.global.u64 [%rd1], %rd2;",
                                   "  getctarank.u64 %rd2, %rd1;\n  st.global.u64 [%rd1], %rd2;")
    assert text != _DIRECTIVES_PTX
    module = gpu.load_ptx(text, "directives.ptx")
    with pytest.raises(ClusterAccessError, match="not a shared-memory address"):
        gpu.launch(module["mapa_global"], (2,), (32,), [gpu.zeros(4, np.uint64)], cluster=(2, 1, 1),
                   timing=False)
