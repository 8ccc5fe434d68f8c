"""Launching and results: CUDA's launch checks and argument packing (``checks``), the device heap and
``DeviceArray`` (``device_memory``), engine state built from a checked launch and engine status turned
into the project's errors (``runner``, ``timed``), and the ``Run`` that wraps the engine's arrays (``run``)."""
