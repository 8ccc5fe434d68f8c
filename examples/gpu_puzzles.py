"""GPU-Puzzles-style exercises in numba.cuda syntax, run (and timed) on gpusim with ``@gpusim.jit``.

The classic teaching sequence (map, zip, guards, 2D, broadcast, blocks, shared memory, pooling, dot
product, 1D convolution, prefix sum, axis sum, matmul) plus atomics and a warp shuffle. Each puzzle is
a kernel, the inputs it is launched on, the launch shape and a numpy reference; ``python
examples/gpu_puzzles.py`` runs them all and prints the cycles of each; tests/test_python_kernels.py
checks every one against its reference. A notebook that ran these on numba's CUDA simulator
(NUMBA_ENABLE_CUDASIM=1, ``@cuda.jit``) runs them on gpusim by writing ``@gpusim.jit`` instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import cuda, float32

import gpusim

TPB = 8           # threads per block of the shared-memory puzzles
TILE = 8          # matmul tile
TPB2 = 2 * TPB    # a shared array size must be a constant (numba does not fold 2 * TPB there)


@gpusim.jit
def map_add10(a, out):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10


@gpusim.jit
def zip_add(a, b, out):
    i = cuda.threadIdx.x
    out[i] = a[i] + b[i]


@gpusim.jit
def guard_add10(a, out, size):
    i = cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10


@gpusim.jit
def map_2d(a, out, size):
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@gpusim.jit
def broadcast(a, b, out, size):
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    if i < size and j < size:
        out[i, j] = a[i, 0] + b[0, j]


@gpusim.jit
def blocks_add10(a, out, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10


@gpusim.jit
def blocks_2d(a, out, size):
    i, j = cuda.grid(2)
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@gpusim.jit
def shared_add10(a, out, size):
    shared = cuda.shared.array(TPB, float32)
    i = cuda.grid(1)
    local_i = cuda.threadIdx.x
    if i < size:
        shared[local_i] = a[i]
    cuda.syncthreads()
    if i < size:
        out[i] = shared[local_i] + 10


@gpusim.jit
def pooling(a, out, size):
    """out[i] = a[i] + a[i-1] + a[i-2] (the missing terms are 0), one block."""
    shared = cuda.shared.array(TPB, float32)
    i = cuda.grid(1)
    local_i = cuda.threadIdx.x
    if i < size:
        shared[local_i] = a[i]
    cuda.syncthreads()
    if i < size:
        total = shared[local_i]
        if local_i >= 1:
            total += shared[local_i - 1]
        if local_i >= 2:
            total += shared[local_i - 2]
        out[i] = total


@gpusim.jit
def dot(a, b, out, size):
    """out[0] = a . b in one block: products in shared memory, then a tree reduction."""
    shared = cuda.shared.array(TPB, float32)
    i = cuda.grid(1)
    local_i = cuda.threadIdx.x
    shared[local_i] = a[i] * b[i] if i < size else 0.0
    cuda.syncthreads()
    step = TPB // 2
    while step > 0:
        if local_i < step:
            shared[local_i] += shared[local_i + step]
        cuda.syncthreads()
        step //= 2
    if local_i == 0:
        out[0] = shared[0]


@gpusim.jit
def conv1d(a, b, out, a_size, b_size):
    """out[i] = sum_j a[i + j] * b[j] (a beyond its end reads as 0), a tile of a and all of b in shared."""
    shared_a = cuda.shared.array(TPB2, float32)
    shared_b = cuda.shared.array(TPB, float32)
    i = cuda.grid(1)
    local_i = cuda.threadIdx.x
    shared_a[local_i] = a[i] if i < a_size else 0.0
    tail = i + TPB
    shared_a[local_i + TPB] = a[tail] if tail < a_size else 0.0
    if local_i < b_size:
        shared_b[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            total += shared_a[local_i + j] * shared_b[j]
        out[i] = total


@gpusim.jit
def prefix_sum(a, out, size):
    """Inclusive scan of each block's TPB elements (Hillis-Steele, double-buffered in shared memory)."""
    buffers = cuda.shared.array((2, TPB), float32)
    i = cuda.grid(1)
    local_i = cuda.threadIdx.x
    buffers[0, local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    source = 0
    step = 1
    while step < TPB:
        value = buffers[source, local_i]
        if local_i >= step:
            value += buffers[source, local_i - step]
        buffers[1 - source, local_i] = value
        cuda.syncthreads()
        source = 1 - source
        step *= 2
    if i < size:
        out[i] = buffers[source, local_i]


@gpusim.jit
def axis_sum(a, out, size):
    """out[row, 0] = sum of a[row, :]: one block per row, a strided loop then a tree in shared memory."""
    shared = cuda.shared.array(TPB, float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    total = 0.0
    for k in range(local_i, size, TPB):
        total += a[row, k]
    shared[local_i] = total
    cuda.syncthreads()
    step = TPB // 2
    while step > 0:
        if local_i < step:
            shared[local_i] += shared[local_i + step]
        cuda.syncthreads()
        step //= 2
    if local_i == 0:
        out[row, 0] = shared[0]


@gpusim.jit
def matmul(a, b, out, size):
    """out = a @ b, square, tiled in shared memory (TILE x TILE threads per block)."""
    tile_a = cuda.shared.array((TILE, TILE), float32)
    tile_b = cuda.shared.array((TILE, TILE), float32)
    i, j = cuda.grid(2)
    local_i = cuda.threadIdx.x
    local_j = cuda.threadIdx.y
    total = 0.0
    for start in range(0, size, TILE):
        tile_a[local_i, local_j] = a[i, start + local_j] if i < size and start + local_j < size else 0.0
        tile_b[local_i, local_j] = b[start + local_i, j] if j < size and start + local_i < size else 0.0
        cuda.syncthreads()
        for k in range(TILE):
            total += tile_a[local_i, k] * tile_b[k, local_j]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@gpusim.jit
def histogram(values, bins):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(bins, values[i], 1)


@gpusim.jit
def warp_sum(a, out):
    """Each warp adds its 32 values with shuffles; lane 0 adds the warp's sum to out[0] atomically."""
    i = cuda.grid(1)
    value = a[i] if i < a.size else 0.0
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(out, 0, value)


@dataclass
class Puzzle:
    """A kernel, its launch and its numpy reference: ``inputs()`` -> args, ``reference(*args)`` -> output."""

    name: str
    kernel: object
    grid: object
    block: object
    inputs: Callable
    output: int                          # index of the argument that holds the result
    reference: Callable


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).integers(0, 10, shape).astype(np.float32)


def _conv_reference(a, b, out, a_size, b_size):
    padded = np.concatenate([a, np.zeros(b_size, np.float32)])
    return np.array([np.dot(padded[i:i + b_size], b) for i in range(a_size)], np.float32)


def _scan_reference(a, out, size):
    return np.concatenate([np.cumsum(a[s:s + TPB]) for s in range(0, size, TPB)]).astype(np.float32)


PUZZLES = [
    Puzzle("map", map_add10, 1, 4, lambda: (_f32(4), np.zeros(4, np.float32)), 1, lambda a, out: a + 10),
    Puzzle("zip", zip_add, 1, 4, lambda: (_f32(4), _f32(4, seed=1), np.zeros(4, np.float32)), 2,
           lambda a, b, out: a + b),
    Puzzle("guards", guard_add10, 1, 8, lambda: (_f32(4), np.zeros(4, np.float32), 4), 1,
           lambda a, out, size: a + 10),
    Puzzle("map 2D", map_2d, 1, (3, 3), lambda: (_f32(2, 2), np.zeros((2, 2), np.float32), 2), 1,
           lambda a, out, size: a + 10),
    Puzzle("broadcast", broadcast, 1, (3, 3),
           lambda: (_f32(2, 1), _f32(1, 2, seed=1), np.zeros((2, 2), np.float32), 2), 2,
           lambda a, b, out, size: a + b),
    Puzzle("blocks", blocks_add10, 3, 4, lambda: (_f32(9), np.zeros(9, np.float32), 9), 1,
           lambda a, out, size: a + 10),
    Puzzle("blocks 2D", blocks_2d, (2, 2), (3, 3), lambda: (_f32(5, 5), np.zeros((5, 5), np.float32), 5), 1,
           lambda a, out, size: a + 10),
    Puzzle("shared memory", shared_add10, 2, TPB, lambda: (_f32(12), np.zeros(12, np.float32), 12), 1,
           lambda a, out, size: a + 10),
    Puzzle("pooling", pooling, 1, TPB, lambda: (_f32(TPB), np.zeros(TPB, np.float32), TPB), 1,
           lambda a, out, size: a + np.concatenate([[0], a[:-1]]) + np.concatenate([[0, 0], a[:-2]])),
    Puzzle("dot product", dot, 1, TPB, lambda: (_f32(6), _f32(6, seed=1), np.zeros(1, np.float32), 6), 2,
           lambda a, b, out, size: np.array([a @ b], np.float32)),
    Puzzle("1D convolution", conv1d, 2, TPB,
           lambda: (_f32(15), _f32(4, seed=1), np.zeros(15, np.float32), 15, 4), 2, _conv_reference),
    Puzzle("prefix sum", prefix_sum, 2, TPB, lambda: (_f32(16), np.zeros(16, np.float32), 16), 1,
           _scan_reference),
    Puzzle("axis sum", axis_sum, (1, 4), TPB, lambda: (_f32(4, 13), np.zeros((4, 1), np.float32), 13), 1,
           lambda a, out, size: a.sum(axis=1, keepdims=True)),
    Puzzle("matmul", matmul, (2, 2), (TILE, TILE),
           lambda: (_f32(12, 12), _f32(12, 12, seed=1), np.zeros((12, 12), np.float32), 12), 2,
           lambda a, b, out, size: a @ b),
    Puzzle("atomics", histogram, 4, 64,
           lambda: (np.random.default_rng(2).integers(0, 16, 200).astype(np.int32), np.zeros(16, np.int32)), 1,
           lambda values, bins: np.bincount(values, minlength=16).astype(np.int32)),
    Puzzle("warp shuffle", warp_sum, 2, 64, lambda: (_f32(100), np.zeros(1, np.float32)), 1,
           lambda a, out: np.array([a.sum()], np.float32)),
]


def solve(puzzle: Puzzle):
    """Run one puzzle on gpusim: (the Run, the output array, the numpy reference)."""
    args = puzzle.inputs()
    expected = puzzle.reference(*args)
    run = puzzle.kernel[puzzle.grid, puzzle.block](*args)
    return run, args[puzzle.output], expected


if __name__ == "__main__":
    for puzzle in PUZZLES:
        run, got, expected = solve(puzzle)
        verdict = "ok" if np.allclose(got, expected) else "WRONG"
        print(f"{puzzle.name:15} {verdict:5} {run.cycles:6} cycles  {run.warp_instructions:5} warp-instructions")
