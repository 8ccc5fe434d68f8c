"""The system model: host thread, streams, launch overhead, CUDA-graph replay and host<->device copies.

What it models (a discrete-event simulation on simpy; times in seconds):

- **Host thread.** Every runtime API call costs host CPU time from the config and advances the host
  clock: a kernel launch ``launch_cpu_us``, a copy's set-up ``memcpy_setup_cpu_us``, a graph launch
  ``graph_launch_cpu_us`` (once for the whole graph), graph instantiation
  ``graph_instantiate_us_per_kernel`` per kernel node, and a synchronize ``sync_cpu_us`` paid *after* the
  work it waits for has finished (the wake-up and return). The work reaches its stream when the call
  returns. Event record / wait calls cost no host time (no config field for them).
- **Streams** are FIFO queues: an operation starts when the one before it in the same stream is done
  and its engine is free. Operations of different streams are independent unless an event joins them.
- **Engines.** One compute engine and two copy engines (H2D and D2H), each a simpy resource of
  capacity 1. Copies in one stream therefore overlap kernels in another, and an H2D copy overlaps a D2H
  copy. Requests for an engine are served in arrival order.
- **Kernels.** Before a kernel reaches the compute engine the GPU front end spends the per-kernel launch
  latency ``kernel_launch_latency_cycles`` (at ``core_clock_mhz``) on it, outside the engine, so the
  latency of one stream's kernel can hide under another stream's running kernel but not under the
  previous kernel of its own stream. The kernel then runs for real (``gpu.launch``: functional effects
  on device memory and the cycle engine's duration ``run.seconds``) at the simulated moment it reaches
  the engine, so data dependencies guarded by stream order and events are respected. Its effects on
  memory appear at that start: an access that races with it (ordered by neither stream nor event) sees
  them early, where CUDA leaves the result undefined. A kernel's error (an illegal address, ...) reaches
  the host at the next call that waits for the GPU, as CUDA reports asynchronous errors; the streams are
  unusable afterwards (make a new GPU).
- **Co-scheduling: none.** The cycle engine simulates one kernel on the whole GPU, so the compute engine
  runs one kernel at a time; kernels from different streams run one after another in the order they
  reach it. (Real GPUs overlap the tail of one kernel with the head of another, or run small grids side
  by side; that concurrency is not modelled.)
- **Copies** cross the host link: ``link_latency_us + bytes / link_bandwidth_gbs``. The host array is
  read when the host makes the call (like a staged pageable copy), the device array is written when the
  copy completes; a device-to-host copy fills the returned host array when it completes, so it is valid
  after a synchronize.
- **Graphs.** ``with g.capture(s):`` records launches and copies issued to ``s`` instead of running them
  (each captured call still costs its host time); ``g.instantiate()`` costs host time once; ``g.replay(s)``
  costs one graph launch on the host and, on the GPU, one kernel launch latency for the graph plus
  ``graph_kernel_gpu_us`` per kernel node instead of the per-kernel launch latency. Every node runs for
  real at each replay.
- **Events** (``s.record()`` / ``s.wait(event)``) order work across streams; ``event.query()`` and the
  synchronize calls advance the simulation lazily, only as far as the host needs.

Simplifications: no limit on the depth of a stream's queue (CUDA blocks the host after ~1024 pending
launches); no legacy default-stream implicit synchronization; link latency occupies the copy engine; no
page-locking cost; graph nodes run in capture order (a captured stream is a chain).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import simpy

from gpusim.errors import LaunchError
from gpusim.host.timeline import (
    COMPUTE_TRACK,
    D2H_TRACK,
    H2D_TRACK,
    HOST_TRACK,
    KERNEL_CATEGORY,
    Timeline,
)

MICROSECOND_S = 1e-6
GpuProcess = Generator[simpy.Event, Any, None]  # a simpy process body on the GPU side
GIGABYTE_BYTES = 1e9


@dataclass(frozen=True)
class HostCosts:
    """The system model's parameters in seconds and bytes per second, read once from a GPUConfig."""

    launch_s: float
    sync_s: float
    graph_launch_s: float
    graph_instantiate_per_kernel_s: float
    graph_kernel_gpu_s: float
    memcpy_setup_s: float
    link_bytes_per_s: float
    link_latency_s: float
    kernel_launch_latency_s: float

    @classmethod
    def from_config(cls, config: Any) -> HostCosts:
        clock_hz = float(config.core_clock_mhz) * 1e6
        return cls(
            launch_s=float(config.launch_cpu_us) * MICROSECOND_S,
            sync_s=float(config.sync_cpu_us) * MICROSECOND_S,
            graph_launch_s=float(config.graph_launch_cpu_us) * MICROSECOND_S,
            graph_instantiate_per_kernel_s=float(
                config.graph_instantiate_us_per_kernel) * MICROSECOND_S,
            graph_kernel_gpu_s=float(config.graph_kernel_gpu_us) * MICROSECOND_S,
            memcpy_setup_s=float(config.memcpy_setup_cpu_us) * MICROSECOND_S,
            link_bytes_per_s=float(config.link_bandwidth_gbs) * GIGABYTE_BYTES,
            link_latency_s=float(config.link_latency_us) * MICROSECOND_S,
            kernel_launch_latency_s=float(
                config.kernel_launch_latency_cycles) / clock_hz,
        )

    def copy_seconds(self, nbytes: int) -> float:
        return self.link_latency_s + nbytes / self.link_bytes_per_s


def _kernel_name(kernel: Any) -> str:
    return str(getattr(kernel, "name", kernel))


@dataclass
class KernelNode:
    """A kernel launch as queued or captured: what to run and with which arguments."""

    kernel: Any
    grid: object
    block: object
    args: list
    shared_bytes: int = 0

    @property
    def name(self) -> str:
        return _kernel_name(self.kernel)


@dataclass
class CopyNode:
    """A copy over the host link. ``to_device``: host -> dev; else dev -> ``host_out``."""

    to_device: bool
    device_array: Any
    host_array: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.host_array.nbytes)

    @property
    def name(self) -> str:
        return "memcpy HtoD" if self.to_device else "memcpy DtoH"


class Event:
    """A CUDA event: completes when its stream reaches the point where it was recorded."""

    def __init__(self, system: System, stream: Stream):
        self.system = system
        self.stream = stream
        self.completed = system.env.event()
        self.time_s: float | None = None

    def query(self) -> bool:
        """True once the GPU has passed the record point at the host's current time (cudaEventQuery)."""
        self.system.advance_to_host_time()
        return self.completed.processed

    def synchronize(self) -> None:
        """The host waits for the event, then pays the synchronize cost (cudaEventSynchronize)."""
        self.system.host_wait(self.completed, "cudaEventSynchronize")

    def elapsed_s(self, later: Event) -> float:
        """GPU seconds from this event to a later one (cudaEventElapsedTime, in seconds)."""
        if self.time_s is None or later.time_s is None:
            raise LaunchError("elapsed_s needs both events completed: synchronize first")
        return later.time_s - self.time_s


@dataclass
class _Operation:
    """One entry of a stream's FIFO queue."""

    kind: str  # "kernel", "copy", "record", "wait", "graph"
    payload: Any
    done: simpy.Event
    label: str = ""


class Stream:
    """A FIFO queue of GPU work (cudaStream_t)."""

    def __init__(self, system: System, stream_id: int):
        self.system = system
        self.stream_id = stream_id
        self.track = f"stream {stream_id}"
        self.queue: simpy.Store = simpy.Store(system.env)
        self.last_done: simpy.Event = system.env.event().succeed()
        self.capturing: Graph | None = None
        system.env.process(self._serve())

    # ---- API (host side) -------------------------------------------------------------------------------

    def launch(self, kernel: Any, grid: object, block: object, args: list | tuple = (),
               shared_bytes: int = 0) -> None:
        """Queue a kernel launch (cudaLaunchKernel); costs ``launch_cpu_us`` of host time."""
        node = KernelNode(kernel=kernel, grid=grid, block=block, args=list(args), shared_bytes=shared_bytes)
        self.system.host_call(f"launch {node.name}", self.system.costs.launch_s)
        if self.capturing is not None:
            self.capturing.nodes.append(node)
            return
        self._enqueue("kernel", node, node.name)

    def copy_to_device(self, host_array: np.ndarray, device_array: Any) -> None:
        """Queue a host-to-device copy of ``host_array`` into ``device_array`` (cudaMemcpyAsync)."""
        host = np.asarray(host_array)
        if host.nbytes != int(device_array.nbytes):
            raise LaunchError(f"copy_to_device: host array has {host.nbytes} bytes, device array "
                              f"{device_array.nbytes}; copy whole arrays of the same size")
        self.system.host_call("memcpy HtoD", self.system.costs.memcpy_setup_s)
        if self.capturing is not None:
            self.capturing.nodes.append(CopyNode(to_device=True, device_array=device_array, host_array=host))
            return
        node = CopyNode(to_device=True, device_array=device_array, host_array=host.copy())
        self._enqueue("copy", node, node.name)

    def copy_to_host(self, device_array: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Queue a device-to-host copy; the returned array holds the data once the copy has completed."""
        if out is None:
            out = np.empty(device_array.shape, dtype=device_array.dtype)
        if out.nbytes != int(device_array.nbytes):
            raise LaunchError(f"copy_to_host: out has {out.nbytes} bytes, device array "
                              f"{device_array.nbytes}")
        self.system.host_call("memcpy DtoH", self.system.costs.memcpy_setup_s)
        node = CopyNode(to_device=False, device_array=device_array, host_array=out)
        if self.capturing is not None:
            self.capturing.nodes.append(node)
        else:
            self._enqueue("copy", node, node.name)
        return out

    def record(self) -> Event:
        """Record an event at the current end of this stream (cudaEventRecord)."""
        self._refuse_in_capture("record")
        event = Event(self.system, self)
        self.system.host_call("event record", 0.0)
        self._enqueue("record", event, "record")
        return event

    def wait(self, event: Event) -> None:
        """Later work in this stream waits for the event (cudaStreamWaitEvent)."""
        self._refuse_in_capture("wait")
        self.system.host_call("stream wait event", 0.0)
        self._enqueue("wait", event, f"wait {event.stream.track}")

    def synchronize(self) -> None:
        """The host waits for everything queued so far in this stream (cudaStreamSynchronize)."""
        self._refuse_in_capture("synchronize")
        self.system.host_wait(self.last_done, "cudaStreamSynchronize")

    # ---- machinery -------------------------------------------------------------------------------------

    def _refuse_in_capture(self, what: str) -> None:
        if self.capturing is not None:
            raise LaunchError(f"stream {what} during graph capture is not supported: capture only "
                              "launches and copies, and end the capture before synchronizing")

    def _enqueue(self, kind: str, payload: Any, label: str) -> None:
        """Hand an operation to the stream at the host's current time (the end of the API call)."""
        system = self.system
        operation = _Operation(kind=kind, payload=payload, done=system.env.event(), label=label)
        self.last_done = operation.done
        system.pending.append(operation.done)
        delay_s = system.host_time_s - system.env.now
        system.env.process(_deliver(system.env, self.queue, operation, delay_s))

    def _serve(self) -> Generator[Any, Any, None]:
        """The stream's process: take operations in FIFO order and run each to completion."""
        system = self.system
        while True:
            operation = yield self.queue.get()
            if operation.kind == "kernel":
                yield from system.run_kernel(self, operation.payload, system.costs.kernel_launch_latency_s)
            elif operation.kind == "copy":
                yield from system.run_copy(self, operation.payload)
            elif operation.kind == "record":
                event = operation.payload
                event.time_s = system.env.now
                event.completed.succeed()
                system.timeline.add(self.track, "record", "event", system.env.now, system.env.now)
            elif operation.kind == "wait":
                waited_from_s = system.env.now
                yield operation.payload.completed
                if system.env.now > waited_from_s:
                    system.timeline.add(self.track, operation.label, "wait", waited_from_s, system.env.now)
            elif operation.kind == "graph":
                yield from system.run_graph(self, operation.payload)
            operation.done.succeed()


def _deliver(env: simpy.Environment, queue: simpy.Store, operation: _Operation,
             delay_s: float) -> GpuProcess:
    if delay_s > 0.0:
        yield env.timeout(delay_s)
    yield queue.put(operation)


class Graph:
    """A CUDA graph captured from one stream: a chain of kernel and copy nodes."""

    def __init__(self, system: System):
        self.system = system
        self.nodes: list[KernelNode | CopyNode] = []
        self.instantiated = False

    @contextmanager
    def capture(self, stream: Stream) -> Iterator[Graph]:
        """Record the launches and copies issued to ``stream`` inside the block instead of running them."""
        if stream.capturing is not None:
            raise LaunchError(f"{stream.track} is already capturing a graph")
        stream.capturing = self
        self.instantiated = False
        try:
            yield self
        finally:
            stream.capturing = None

    @property
    def kernel_count(self) -> int:
        return sum(1 for node in self.nodes if isinstance(node, KernelNode))

    def instantiate(self) -> Graph:
        """cudaGraphInstantiate: a one-time host cost per kernel node."""
        if not self.nodes:
            raise LaunchError("instantiate: the graph is empty; capture launches with `with g.capture(s):`")
        self.system.host_call("graph instantiate",
                              self.system.costs.graph_instantiate_per_kernel_s * self.kernel_count)
        self.instantiated = True
        return self

    def replay(self, stream: Stream) -> None:
        """cudaGraphLaunch: one host cost for the whole graph; the nodes run in order on ``stream``."""
        if not self.instantiated:
            raise LaunchError("replay: call g.instantiate() after capturing and before replaying")
        if stream.capturing is not None:
            raise LaunchError("replay into a capturing stream is not supported")
        self.system.host_call(f"graph launch ({len(self.nodes)} nodes)", self.system.costs.graph_launch_s)
        snapshot: list[KernelNode | CopyNode] = []
        for node in self.nodes:
            if isinstance(node, CopyNode) and node.to_device:
                snapshot.append(CopyNode(to_device=True, device_array=node.device_array,
                                         host_array=node.host_array.copy()))
            else:
                snapshot.append(node)
        stream._enqueue("graph", snapshot, "graph")


class System:
    """One GPU's host thread, streams, engines and timeline."""

    def __init__(self, gpu: Any):
        self.gpu = gpu
        self.costs = HostCosts.from_config(gpu.config)
        self.env = simpy.Environment()
        self.host_time_s = 0.0
        self.compute_engine = simpy.Resource(self.env, capacity=1)
        self.h2d_engine = simpy.Resource(self.env, capacity=1)
        self.d2h_engine = simpy.Resource(self.env, capacity=1)
        self.timeline = Timeline()
        self.streams: list[Stream] = []
        self.pending: list[simpy.Event] = []
        self.runs: list[object] = []
        self.failure: Exception | None = None

    def _run_gpu(self, until: float | simpy.Event) -> None:
        """Advance the GPU side; a kernel's error (IllegalAddressError, ...) reaches the host as raised."""
        try:
            self.env.run(until=until)
        except Exception as error:
            failure, self.failure = self.failure, None
            if failure is not None and failure is not error:
                raise failure from None
            raise

    # ---- factories the GPU object forwards to --------------------------------------------------------

    def stream(self) -> Stream:
        stream = Stream(self, len(self.streams) + 1)
        self.streams.append(stream)
        return stream

    def graph(self) -> Graph:
        return Graph(self)

    def synchronize(self) -> None:
        """cudaDeviceSynchronize: the host waits until all queued work is done, then pays sync_cpu_us."""
        for stream in self.streams:
            stream._refuse_in_capture("synchronize")
        self.host_wait(self.env.all_of(list(self.pending)), "cudaDeviceSynchronize")
        self.pending = [event for event in self.pending if not event.processed]

    # ---- host clock ----------------------------------------------------------------------------------

    def host_call(self, name: str, cost_s: float) -> None:
        start_s = self.host_time_s
        self.host_time_s += cost_s
        self.timeline.add(HOST_TRACK, name, "api", start_s, self.host_time_s)

    def advance_to_host_time(self) -> None:
        """Run the GPU side up to the host's current time."""
        if self.host_time_s > self.env.now:
            self._run_gpu(self.host_time_s)

    def host_wait(self, target: simpy.Event, name: str) -> None:
        """The host blocks until ``target`` has happened on the GPU side, then pays the sync cost."""
        start_s = self.host_time_s
        if not target.processed:
            try:
                self._run_gpu(target)
            except RuntimeError as error:  # simpy: no events left before the target happened
                if "No scheduled events left" not in str(error):
                    raise
                raise LaunchError(f"{name}: the GPU can never reach this point (a stream waits for an "
                                  f"event that is never recorded): {error}") from error
        self.host_time_s = max(self.host_time_s, self.env.now)
        if self.host_time_s > start_s:
            self.timeline.add(HOST_TRACK, f"{name} (waiting)", "wait", start_s, self.host_time_s)
        self.host_call(name, self.costs.sync_s)

    # ---- GPU side (simpy processes) ------------------------------------------------------------------

    def run_kernel(self, stream: Stream, node: KernelNode, launch_latency_s: float) -> GpuProcess:
        """Launch latency on the front end, then the kernel on the compute engine, run for real."""
        env = self.env
        if launch_latency_s > 0.0:
            latency_start_s = env.now
            yield env.timeout(launch_latency_s)
            self.timeline.add(stream.track, f"launch latency {node.name}", "launch", latency_start_s, env.now)
        with self.compute_engine.request() as request:
            yield request
            start_s = env.now
            try:
                run = self.gpu.launch(node.kernel, grid=node.grid, block=node.block,
                                      args=node.args, shared_bytes=node.shared_bytes)
            except Exception as error:
                self.failure = error  # re-raised unchanged to the host by _run_gpu
                raise
            self.runs.append(run)
            yield env.timeout(float(run.seconds))
            details = {"grid": node.grid, "block": node.block, "stream": stream.stream_id,
                       "cycles": getattr(run, "cycles", 0), "metrics": dict(getattr(run, "metrics", {})),
                       "stalls": dict(getattr(run, "stalls", {}))}
            self.timeline.add(COMPUTE_TRACK, node.name, KERNEL_CATEGORY, start_s, env.now, details)
            self.timeline.add(stream.track, node.name, KERNEL_CATEGORY, start_s, env.now)

    def run_copy(self, stream: Stream, node: CopyNode) -> GpuProcess:
        """A copy over the host link on the copy engine of its direction."""
        env = self.env
        engine, track = (self.h2d_engine, H2D_TRACK) if node.to_device else (self.d2h_engine, D2H_TRACK)
        with engine.request() as request:
            yield request
            start_s = env.now
            yield env.timeout(self.costs.copy_seconds(node.nbytes))
            if node.to_device:
                node.device_array.set(node.host_array)
            else:
                node.host_array[...] = node.device_array.get().reshape(node.host_array.shape)
            details = {"bytes": node.nbytes, "stream": stream.stream_id}
            self.timeline.add(track, node.name, "copy", start_s, env.now, details)
            self.timeline.add(stream.track, node.name, "copy", start_s, env.now, details)

    def run_graph(self, stream: Stream, nodes: list[KernelNode | CopyNode]) -> GpuProcess:
        """One launch latency for the graph, then each node with the smaller per-kernel graph cost."""
        env = self.env
        graph_start_s = env.now
        if self.costs.kernel_launch_latency_s > 0.0:
            yield env.timeout(self.costs.kernel_launch_latency_s)
            self.timeline.add(stream.track, "graph launch latency", "launch", graph_start_s, env.now)
        for node in nodes:
            if isinstance(node, KernelNode):
                yield from self.run_kernel(stream, node, self.costs.graph_kernel_gpu_s)
            else:
                yield from self.run_copy(stream, node)
        self.timeline.add(stream.track + " graph", f"graph ({len(nodes)} nodes)", "graph", graph_start_s,
                          env.now)
