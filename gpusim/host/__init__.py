"""The host-side model (simpy): the host thread, streams, copy and compute engines, events, CUDA graphs,
and the timeline they record. Kernel durations come from the engine through the launch layer."""
