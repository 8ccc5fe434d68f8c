"""Tests of gpusim.host.system: stream FIFO order, events across streams, copy/compute overlap, synchronize,
graph capture/instantiate/replay, the timeline and its Chrome export.

Most tests use a test double (FakeGPU): kernels are numpy functions with a fixed duration, so the
expected times are derived here from the config fields by the formulas in docs/system.md. The last tests
use the real GPU and programs/overhead/chain.ptx. The doubles are imported by the lab tests too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from gpusim.errors import LaunchError
from gpusim.host.system import System
from gpusim.host.timeline import COMPUTE_TRACK, D2H_TRACK, H2D_TRACK, HOST_TRACK


@dataclass(frozen=True)
class FakeConfig:
    """The config fields the system model reads (values chosen to be distinct, not realistic)."""

    core_clock_mhz: float = 1000.0
    sms: int = 4
    launch_cpu_us: float = 2.5
    sync_cpu_us: float = 3.0
    graph_launch_cpu_us: float = 2.0
    graph_instantiate_us_per_kernel: float = 20.0
    graph_kernel_gpu_us: float = 0.25
    memcpy_setup_cpu_us: float = 1.5
    link_bandwidth_gbs: float = 64.0
    link_latency_us: float = 1.0
    kernel_launch_latency_cycles: int = 700


class FakeDeviceArray:
    def __init__(self, host: np.ndarray):
        self.data = np.array(host)

    def get(self) -> np.ndarray:
        return self.data.copy()

    def set(self, host: np.ndarray) -> None:
        self.data[...] = np.asarray(host).reshape(self.data.shape)

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)

    @property
    def shape(self) -> tuple:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype


@dataclass
class FakeRun:
    seconds: float
    cycles: int
    metrics: dict = field(default_factory=dict)


@dataclass
class FakeKernel:
    name: str
    seconds: float
    body: object  # callable(args) -> None
    issue_pct: float = 50.0
    dram_pct: float = 20.0


class FakeGPU:
    """Records launches in order; each launch runs the kernel body and returns its fixed duration."""

    def __init__(self, config: FakeConfig | None = None):
        self.config = config or FakeConfig()
        self.launched: list[str] = []
        self.system = System(self)

    def launch(self, kernel: FakeKernel, grid: object = 1, block: object = 1, args: list | tuple = (),
               shared_bytes: int = 0, timing: bool = True) -> FakeRun:
        self.launched.append(kernel.name)
        kernel.body(args)
        cycles = int(round(kernel.seconds * self.config.core_clock_mhz * 1e6))
        metrics = {"smsp__issue_active.avg.pct_of_peak_sustained_active": kernel.issue_pct,
                   "dram__throughput.avg.pct_of_peak_sustained_elapsed": kernel.dram_pct}
        return FakeRun(seconds=kernel.seconds, cycles=cycles, metrics=metrics)

    def to_device(self, host: np.ndarray) -> FakeDeviceArray:
        return FakeDeviceArray(host)

    def zeros(self, shape: object, dtype: object) -> FakeDeviceArray:
        return FakeDeviceArray(np.zeros(shape, dtype))

    def stream(self):
        return self.system.stream()

    def graph(self):
        return self.system.graph()

    def synchronize(self) -> None:
        self.system.synchronize()

    @property
    def timeline(self):
        return self.system.timeline


def affine_kernel(name: str, seconds: float, scale: float, bias: float) -> FakeKernel:
    """out = in * scale + bias, like programs/overhead/chain.cu's `step` (args: out, in)."""

    def body(args: list) -> None:
        out, source = args[0], args[1]
        out.data[...] = source.data * np.float32(scale) + np.float32(bias)

    return FakeKernel(name=name, seconds=seconds, body=body)


# ---------------------------------------------------------------------------------------------------------
# helpers deriving the expected times from the config


US = 1e-6


def launch_latency_s(cfg: FakeConfig) -> float:
    return cfg.kernel_launch_latency_cycles / (cfg.core_clock_mhz * 1e6)


def copy_s(cfg: FakeConfig, nbytes: int) -> float:
    return cfg.link_latency_us * US + nbytes / (cfg.link_bandwidth_gbs * 1e9)


def back_to_back_end_s(cfg: FakeConfig, kernel_s: float, count: int, host_start_s: float = 0.0) -> float:
    """GPU end of `count` kernels launched back to back into one stream (the FIFO recurrence)."""
    gpu_end_s = 0.0
    for index in range(count):
        arrival_s = host_start_s + (index + 1) * cfg.launch_cpu_us * US
        gpu_end_s = max(arrival_s, gpu_end_s) + launch_latency_s(cfg) + kernel_s
    return gpu_end_s


def make_chain(gpu: FakeGPU, count: int, kernel_s: float, size: int = 64):
    host = np.linspace(0.0, 1.0, size, dtype=np.float32)
    buffers = [gpu.to_device(host), gpu.to_device(np.zeros(size, np.float32))]
    kernels = [affine_kernel(f"step{index}", kernel_s, 1.5, 0.25) for index in range(count)]
    return host, buffers, kernels


def launch_chain(stream, buffers, kernels) -> None:
    for index, kernel in enumerate(kernels):
        stream.launch(kernel, 1, 64, [buffers[(index + 1) % 2], buffers[index % 2]])


def reference_chain(host: np.ndarray, count: int) -> np.ndarray:
    values = host.copy()
    for _ in range(count):
        values = values * np.float32(1.5) + np.float32(0.25)
    return values


# ---------------------------------------------------------------------------------------------------------
# single stream: order, overhead arithmetic, synchronize


def test_one_launch_then_synchronize_costs_launch_latency_kernel_and_sync():
    gpu = FakeGPU()
    cfg = gpu.config
    kernel = affine_kernel("k", 5 * US, 2.0, 0.0)
    data = [gpu.to_device(np.ones(8, np.float32)), gpu.to_device(np.ones(8, np.float32))]
    s = gpu.stream()
    s.launch(kernel, 1, 8, [data[1], data[0]])
    assert gpu.launched == []  # queued, not yet run: the GPU side advances lazily
    gpu.synchronize()
    expected_s = cfg.launch_cpu_us * US + launch_latency_s(cfg) + 5 * US + cfg.sync_cpu_us * US
    assert gpu.system.host_time_s == pytest.approx(expected_s, rel=1e-12)
    np.testing.assert_array_equal(data[1].get(), np.full(8, 2.0, np.float32))


@pytest.mark.parametrize("kernel_us", [0.5, 8.0])  # host-bound and GPU-bound
def test_back_to_back_launches_follow_the_fifo_recurrence(kernel_us):
    gpu = FakeGPU()
    cfg = gpu.config
    count = 10
    host, buffers, kernels = make_chain(gpu, count, kernel_us * US)
    s = gpu.stream()
    launch_chain(s, buffers, kernels)
    gpu.synchronize()
    gpu_end_s = back_to_back_end_s(cfg, kernel_us * US, count)
    assert gpu.system.host_time_s == pytest.approx(gpu_end_s + cfg.sync_cpu_us * US, rel=1e-12)
    assert gpu.launched == [f"step{index}" for index in range(count)]
    np.testing.assert_allclose(buffers[count % 2].get(), reference_chain(host, count), rtol=1e-6)
    kernel_spans = gpu.timeline.kernels()
    assert len(kernel_spans) == count
    for earlier, later in zip(kernel_spans, kernel_spans[1:], strict=False):
        assert later.start_s >= earlier.end_s + launch_latency_s(cfg) - 1e-15


def test_stream_synchronize_waits_only_for_its_own_stream():
    gpu = FakeGPU()
    cfg = gpu.config
    long_s = 100 * US
    slow, fast = gpu.stream(), gpu.stream()
    x = gpu.to_device(np.zeros(1024, np.float32))
    slow.launch(affine_kernel("long", long_s, 1.0, 1.0), 1, 32, [x, x])
    payload = np.arange(256, dtype=np.float32)
    y = gpu.to_device(np.zeros(256, np.float32))
    fast.copy_to_device(payload, y)
    fast.synchronize()
    copy_issue_s = cfg.launch_cpu_us * US + cfg.memcpy_setup_cpu_us * US
    expected_s = copy_issue_s + copy_s(cfg, payload.nbytes) + cfg.sync_cpu_us * US
    assert gpu.system.host_time_s == pytest.approx(expected_s, rel=1e-12)
    np.testing.assert_array_equal(y.get(), payload)
    gpu.synchronize()
    long_end_s = cfg.launch_cpu_us * US + launch_latency_s(cfg) + long_s
    assert gpu.system.host_time_s == pytest.approx(long_end_s + cfg.sync_cpu_us * US, rel=1e-12)


def test_synchronize_with_nothing_queued_costs_only_the_sync_call():
    gpu = FakeGPU()
    gpu.synchronize()
    assert gpu.system.host_time_s == pytest.approx(gpu.config.sync_cpu_us * US)


# ---------------------------------------------------------------------------------------------------------
# copies and overlap


def test_copy_round_trip_times_and_data():
    gpu = FakeGPU()
    cfg = gpu.config
    host = np.arange(4096, dtype=np.float32)
    dev = gpu.to_device(np.zeros_like(host))
    s = gpu.stream()
    s.copy_to_device(host, dev)
    host[:] = -1.0  # the host array is read at the call: later changes do not travel
    back = s.copy_to_host(dev)
    gpu.synchronize()
    np.testing.assert_array_equal(back, np.arange(4096, dtype=np.float32))
    h2d = gpu.timeline.on_track(H2D_TRACK)[0]
    d2h = gpu.timeline.on_track(D2H_TRACK)[0]
    assert h2d.start_s == pytest.approx(cfg.memcpy_setup_cpu_us * US)
    assert h2d.duration_s == pytest.approx(copy_s(cfg, host.nbytes))
    assert d2h.start_s == pytest.approx(max(h2d.end_s, 2 * cfg.memcpy_setup_cpu_us * US))
    assert gpu.system.host_time_s == pytest.approx(d2h.end_s + cfg.sync_cpu_us * US)


def test_copy_in_one_stream_overlaps_kernel_in_another():
    gpu = FakeGPU()
    cfg = gpu.config
    nbytes_elements = 1 << 20
    host = np.ones(nbytes_elements, np.float32)
    kernel_s = copy_s(cfg, host.nbytes)  # as long as the copy: overlap halves the time
    compute, copier = gpu.stream(), gpu.stream()
    x = gpu.to_device(np.zeros(16, np.float32))
    compute.launch(affine_kernel("k", kernel_s, 1.0, 0.0), 1, 16, [x, x])
    dev = gpu.to_device(np.zeros_like(host))
    copier.copy_to_device(host, dev)
    gpu.synchronize()
    kernel = gpu.timeline.on_track(COMPUTE_TRACK)[0]
    copy = gpu.timeline.on_track(H2D_TRACK)[0]
    assert copy.overlap_s(kernel.start_s, kernel.end_s) > 0.5 * kernel_s
    serial_s = cfg.launch_cpu_us * US + launch_latency_s(cfg) + kernel_s + copy_s(cfg, host.nbytes)
    overlapped_s = max(cfg.launch_cpu_us * US + launch_latency_s(cfg) + kernel_s,
                       (cfg.launch_cpu_us + cfg.memcpy_setup_cpu_us) * US + copy_s(cfg, host.nbytes))
    assert max(kernel.end_s, copy.end_s) == pytest.approx(overlapped_s)
    assert overlapped_s < serial_s
    assert gpu.system.host_time_s == pytest.approx(overlapped_s + cfg.sync_cpu_us * US)


def test_kernels_from_two_streams_serialize_on_the_compute_engine():
    gpu = FakeGPU()
    cfg = gpu.config
    kernel_s = 20 * US
    a, b = gpu.stream(), gpu.stream()
    x = gpu.to_device(np.zeros(16, np.float32))
    a.launch(affine_kernel("a", kernel_s, 1.0, 0.0), 1, 16, [x, x])
    b.launch(affine_kernel("b", kernel_s, 1.0, 0.0), 1, 16, [x, x])
    gpu.synchronize()
    first, second = gpu.timeline.kernels()
    assert (first.name, second.name) == ("a", "b")
    assert second.start_s == pytest.approx(first.end_s)  # b's launch latency hid under a
    expected_end_s = cfg.launch_cpu_us * US + launch_latency_s(cfg) + 2 * kernel_s
    assert second.end_s == pytest.approx(expected_end_s)


# ---------------------------------------------------------------------------------------------------------
# events across streams


def test_event_orders_a_copy_after_a_kernel_in_another_stream():
    gpu = FakeGPU()
    cfg = gpu.config
    kernel_s = 50 * US
    producer, consumer = gpu.stream(), gpu.stream()
    source = gpu.to_device(np.full(32, 3.0, np.float32))
    result = gpu.to_device(np.zeros(32, np.float32))
    producer.launch(affine_kernel("produce", kernel_s, 2.0, 1.0), 1, 32, [result, source])
    done = producer.record()
    consumer.wait(done)
    guarded = consumer.copy_to_host(result)
    unguarded_stream = gpu.stream()
    unguarded = unguarded_stream.copy_to_host(result)
    assert not done.query()
    gpu.synchronize()
    assert done.query()
    kernel_end_s = cfg.launch_cpu_us * US + launch_latency_s(cfg) + kernel_s
    assert done.time_s == pytest.approx(kernel_end_s)
    np.testing.assert_array_equal(guarded, np.full(32, 7.0, np.float32))
    assert unguarded.shape == guarded.shape
    guarded_span = [span for span in gpu.timeline.on_track(D2H_TRACK) if span.args["stream"] == 2][0]
    unguarded_span = [span for span in gpu.timeline.on_track(D2H_TRACK) if span.args["stream"] == 3][0]
    assert guarded_span.start_s == pytest.approx(kernel_end_s)
    unguarded_issue_s = cfg.launch_cpu_us * US + 2 * cfg.memcpy_setup_cpu_us * US
    assert unguarded_span.start_s == pytest.approx(unguarded_issue_s)  # not ordered after the kernel
    assert unguarded_span.end_s < kernel_end_s


def test_event_query_and_elapsed_time():
    gpu = FakeGPU()
    cfg = gpu.config
    kernel_s = 30 * US
    s = gpu.stream()
    x = gpu.to_device(np.zeros(4, np.float32))
    start = s.record()
    s.launch(affine_kernel("k", kernel_s, 1.0, 0.0), 1, 4, [x, x])
    stop = s.record()
    stop.synchronize()
    # the launch reaches the stream when its host call returns, after `start` was recorded
    assert start.elapsed_s(stop) == pytest.approx(cfg.launch_cpu_us * US + launch_latency_s(cfg) + kernel_s)
    assert gpu.system.host_time_s == pytest.approx(stop.time_s + cfg.sync_cpu_us * US)


# ---------------------------------------------------------------------------------------------------------
# graphs


def test_graph_replay_equals_eager_and_costs_one_host_launch():
    count, kernel_s = 12, 1.0 * US
    eager_gpu = FakeGPU()
    host, buffers, kernels = make_chain(eager_gpu, count, kernel_s)
    eager_stream = eager_gpu.stream()
    launch_chain(eager_stream, buffers, kernels)
    eager_gpu.synchronize()
    eager_result = buffers[count % 2].get()

    gpu = FakeGPU()
    cfg = gpu.config
    host, buffers, kernels = make_chain(gpu, count, kernel_s)
    s = gpu.stream()
    g = gpu.graph()
    with g.capture(s):
        launch_chain(s, buffers, kernels)
    assert gpu.launched == []
    captured_s = count * cfg.launch_cpu_us * US
    assert gpu.system.host_time_s == pytest.approx(captured_s)
    g.instantiate()
    instantiated_s = captured_s + count * cfg.graph_instantiate_us_per_kernel * US
    assert gpu.system.host_time_s == pytest.approx(instantiated_s)
    g.replay(s)
    gpu.synchronize()
    np.testing.assert_array_equal(buffers[count % 2].get(), eager_result)
    np.testing.assert_allclose(eager_result, reference_chain(host, count), rtol=1e-6)
    graph_s = (cfg.graph_launch_cpu_us * US + launch_latency_s(cfg)
               + count * (cfg.graph_kernel_gpu_us * US + kernel_s))
    assert gpu.system.host_time_s == pytest.approx(instantiated_s + graph_s + cfg.sync_cpu_us * US)
    # a second replay runs every kernel again, for real
    g.replay(s)
    gpu.synchronize()
    np.testing.assert_allclose(buffers[count % 2].get(), reference_chain(eager_result, count), rtol=1e-6)
    assert len(gpu.launched) == 2 * count


def test_graph_errors_are_clear():
    gpu = FakeGPU()
    s = gpu.stream()
    g = gpu.graph()
    with pytest.raises(LaunchError, match="instantiate"):
        g.replay(s)
    with pytest.raises(LaunchError, match="empty"):
        g.instantiate()
    with pytest.raises(LaunchError, match="capture"):
        with g.capture(s):
            s.record()
    assert s.capturing is None


# ---------------------------------------------------------------------------------------------------------
# timeline: utilization and Chrome export


def test_utilization_is_the_kernel_busy_share_beside_issue_and_dram():
    gpu = FakeGPU()
    cfg = gpu.config
    kernel_s = 4 * US
    kernel = affine_kernel("k", kernel_s, 1.0, 0.0)
    x = gpu.to_device(np.zeros(4, np.float32))
    s = gpu.stream()
    for _ in range(3):
        s.launch(kernel, 1, 4, [x, x])
        s.synchronize()
    window_s = gpu.system.host_time_s
    util = gpu.timeline.utilization(0.0, window_s)
    per_launch_s = (cfg.launch_cpu_us + cfg.sync_cpu_us) * US + launch_latency_s(cfg) + kernel_s
    assert window_s == pytest.approx(3 * per_launch_s)
    assert util["gpu_utilization_pct"] == pytest.approx(100.0 * kernel_s / per_launch_s)
    assert util["sm_issue_pct"] == pytest.approx(kernel.issue_pct * kernel_s / per_launch_s)
    assert util["dram_throughput_pct"] == pytest.approx(kernel.dram_pct * kernel_s / per_launch_s)


def test_chrome_trace_has_host_stream_and_engine_tracks(tmp_path: Path):
    gpu = FakeGPU()
    s = gpu.stream()
    x = gpu.to_device(np.zeros(64, np.float32))
    s.copy_to_device(np.ones(64, np.float32), x)
    s.launch(affine_kernel("k", 2 * US, 1.0, 0.0), 1, 64, [x, x])
    s.copy_to_host(x)
    gpu.synchronize()
    path = gpu.timeline.to_chrome(tmp_path / "trace.json")
    trace = json.loads(path.read_text())
    names = {event["args"]["name"] for event in trace["traceEvents"] if event["name"] == "thread_name"}
    assert {HOST_TRACK, "stream 1", COMPUTE_TRACK, H2D_TRACK, D2H_TRACK} <= names
    complete = [event for event in trace["traceEvents"] if event["ph"] == "X"]
    assert len(complete) == len(gpu.timeline.spans)
    kernel_event = next(event for event in complete if event["cat"] == "kernel")
    kernel_span = gpu.timeline.kernels()[0]
    assert kernel_event["ts"] == pytest.approx(kernel_span.start_s * 1e6)
    assert kernel_event["dur"] == pytest.approx(kernel_span.duration_s * 1e6)


# ---------------------------------------------------------------------------------------------------------
# the real GPU (passes once the cycle engine and configs are in place)

CHAIN_PTX = Path(__file__).resolve().parents[1] / "programs" / "overhead" / "chain.ptx"


def test_real_gpu_graph_replay_equals_eager_and_overheads_add_up():
    from gpusim.api.gpu import GPU

    gpu = GPU("v100")
    cfg = gpu.config
    step = gpu.load(str(CHAIN_PTX))["step"]
    n, count = 1024, 4
    host = np.linspace(-1.0, 1.0, n, dtype=np.float32)

    def run_chain(use_graph: bool) -> np.ndarray:
        buffers = [gpu.to_device(host), gpu.zeros(n, np.float32)]
        s = gpu.stream()

        def issue() -> None:
            for index in range(count):
                s.launch(step, (n + 255) // 256, 256,
                         [buffers[(index + 1) % 2], buffers[index % 2], np.float32(0.5), np.float32(1.0),
                          np.int32(n)])

        if use_graph:
            g = gpu.graph()
            with g.capture(s):
                issue()
            g.instantiate()
            g.replay(s)
        else:
            issue()
        gpu.synchronize()
        return buffers[count % 2].get()

    eager = run_chain(False)
    graphed = run_chain(True)
    np.testing.assert_array_equal(graphed, eager)
    expected = host.copy()
    for _ in range(count):
        expected = expected * np.float32(0.5) + np.float32(1.0)
    np.testing.assert_allclose(eager, expected, rtol=1e-6)
    kernels = gpu.timeline.kernels()
    assert len(kernels) == 2 * count
    latency_s = cfg.kernel_launch_latency_cycles / (cfg.core_clock_mhz * 1e6)
    eager_spans, graph_spans = kernels[:count], kernels[count:]
    for earlier, later in zip(eager_spans, eager_spans[1:], strict=False):
        assert later.start_s - earlier.end_s >= latency_s - 1e-12
    for earlier, later in zip(graph_spans, graph_spans[1:], strict=False):
        assert later.start_s - earlier.end_s == pytest.approx(cfg.graph_kernel_gpu_us * US)
