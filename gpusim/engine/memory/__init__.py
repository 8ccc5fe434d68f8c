"""The memory hierarchy's timing: coalescer, shared-memory banks, sectored caches, reservation servers,
and the L1 → L2 → DRAM request path."""
