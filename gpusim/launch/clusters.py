"""Thread-block cluster launches (``gpu.launch(..., cluster=(x, y, z))``), as ``cudaLaunchKernelEx`` with
``cudaLaunchAttributeClusterDimension`` does them (CUDA programming guide, "Thread Block Clusters").

Rules checked before a cluster launch runs (each a ``ClusterError`` naming the rule):

* only a GPU with clusters (``max_cluster_blocks`` > 0 in its config: compute capability 9.0+);
* the grid is a whole number of clusters on every axis;
* a cluster holds at most ``max_cluster_blocks`` blocks (8, portable), or ``max_cluster_blocks_nonportable``
  (16 on H100) with ``cluster_nonportable=True`` (the kernel attribute
  ``cudaFuncAttributeNonPortableClusterSizeAllowed``);
* a kernel's PTX directives: ``.reqnctapercluster X, Y, Z`` makes every launch a cluster launch of that shape
  (a ``cluster=`` that differs is refused), ``.explicitcluster`` refuses a launch without a cluster,
  ``.maxclusterrank N`` refuses a cluster of more than N blocks;
* every block of a cluster is resident at once on the SMs of one GPC (``gpc_sms``): gpusim places the blocks
  of a cluster on distinct SMs of a GPC, so a cluster of more blocks than a GPC has SMs can never run
  (``cudaErrorClusterOutOfResources``).

The engine numbers the blocks in cluster order (cluster 0's blocks by rank, then cluster 1's, ...):
``cluster_block`` maps that order to the linear block index (``%ctaid``) and both loops start a cluster's
blocks together.
"""

from __future__ import annotations

import numpy as np

from gpusim.engine.semantics import state as S
from gpusim.errors import ClusterError


def _dims(value, what: str) -> tuple[int, int, int]:
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        value = (int(value),)
    if not isinstance(value, tuple | list) or not 1 <= len(value) <= 3 or not all(
            isinstance(v, int | np.integer) and not isinstance(v, bool) and v >= 1 for v in value):
        raise ClusterError(f"{what} must be 1 to 3 positive ints (x, y, z), got {value!r}")
    dims = [int(v) for v in value] + [1] * (3 - len(value))
    return dims[0], dims[1], dims[2]


def resolve_cluster(config, program, grid3, cluster, nonportable) -> tuple[int, int, int] | None:
    """The cluster shape of a launch of ``program`` (None: no cluster launch), after CUDA's rules."""
    if not isinstance(nonportable, bool | np.bool_):
        raise ClusterError(f"cluster_nonportable must be True or False, got {nonportable!r}")
    directives = program.directives
    required = directives.get("reqnctapercluster")
    name = f"kernel '{program.name}'"
    if required is not None:
        required = _dims(tuple(required), f"{name}'s .reqnctapercluster")
    dims = None if cluster is None else _dims(cluster, "cluster")
    if required is not None and dims is not None and dims != required:
        raise ClusterError(f"{name} declares .reqnctapercluster {', '.join(map(str, required))}, but the launch "
                           f"asks for cluster={dims}: conflicting cluster dimensions (cudaErrorInvalidValue)")
    dims = dims or required
    if dims is None:
        if directives.get("explicitcluster"):
            raise ClusterError(f"{name} is declared .explicitcluster: it must be launched with a cluster "
                               "(gpu.launch(..., cluster=(x, y, z)))")
        if nonportable:
            raise ClusterError("cluster_nonportable=True needs a cluster launch (cluster=(x, y, z))")
        return None
    size = dims[0] * dims[1] * dims[2]
    if config.max_cluster_blocks == 0:
        raise ClusterError(f"thread-block clusters need compute capability 9.0 or later; config "
                           f"'{config.name}' is {config.compute_capability} (max_cluster_blocks 0)")
    limit = config.max_cluster_blocks_nonportable if nonportable else config.max_cluster_blocks
    if size > limit:
        hint = "" if nonportable or size > config.max_cluster_blocks_nonportable else (
            f"; up to {config.max_cluster_blocks_nonportable} with cluster_nonportable=True")
        kind = "non-portable" if nonportable else "portable"
        raise ClusterError(f"cluster {dims} has {size} blocks, more than the {kind} "
                           f"maximum {limit} of '{config.name}' (cudaErrorClusterOutOfResources){hint}")
    rank_limit = directives.get("maxclusterrank")
    if rank_limit is not None and size > int(rank_limit):
        raise ClusterError(f"{name} declares .maxclusterrank {rank_limit}, but the cluster {dims} has {size} blocks")
    for axis, g, cdim in zip("xyz", grid3, dims, strict=True):
        if g % cdim != 0:
            raise ClusterError(f"grid.{axis} = {g} is not a multiple of cluster.{axis} = {cdim}: the grid must be a "
                               "whole number of clusters on every axis (cudaErrorInvalidValue)")
    gpc = min(config.gpc_sms, config.sms)
    if size > gpc:
        raise ClusterError(f"cluster {dims} of {size} blocks can never be resident at once: gpusim places the "
                           f"blocks of a cluster on distinct SMs of one GPC, and a GPC of '{config.name}' has "
                           f"{gpc} SMs (cudaErrorClusterOutOfResources)")
    return dims


def max_active_clusters(config, cluster_size: int, blocks_per_sm: int = 1) -> int:
    """Clusters of ``cluster_size`` blocks resident at once, as ``cudaOccupancyMaxActiveClusters`` answers it
    for a kernel that fits ``blocks_per_sm`` blocks per SM: gpusim's placement (engine/sm/dispatch.py) cuts each
    whole GPC into ``gpc_sms // cluster_size`` positions per block slot; the SMs past the last whole GPC take
    none. A persistent kernel launches this many clusters."""
    if isinstance(cluster_size, bool) or not isinstance(cluster_size, int | np.integer) or cluster_size < 1:
        raise ClusterError(f"cluster_size must be a positive int, got {cluster_size!r}")
    if isinstance(blocks_per_sm, bool) or not isinstance(blocks_per_sm, int | np.integer) or blocks_per_sm < 1:
        raise ClusterError(f"blocks_per_sm must be a positive int, got {blocks_per_sm!r}")
    gpc = min(config.gpc_sms, config.sms)
    if config.max_cluster_blocks == 0 or cluster_size > gpc:
        return 0
    return (config.sms // gpc) * (gpc // int(cluster_size)) * int(blocks_per_sm)


def set_cluster(launch: np.ndarray, dims: tuple[int, int, int] | None) -> None:
    """The cluster columns of the launch array (a 1x1x1 implicit cluster without a cluster launch)."""
    launch[S.L_CLUSTER] = 0 if dims is None else dims[0] | dims[1] << 8 | dims[2] << 16


def cluster_dims_of(launch: np.ndarray) -> tuple[int, int, int]:
    packed = int(launch[S.L_CLUSTER])
    return (1, 1, 1) if packed == 0 else (packed & 255, (packed >> 8) & 255, (packed >> 16) & 255)


def cluster_size_of(launch: np.ndarray) -> int:
    """Blocks of one cluster (0: no cluster launch)."""
    x, y, z = cluster_dims_of(launch)
    return 0 if int(launch[S.L_CLUSTER]) == 0 else x * y * z


def cluster_block(launch: np.ndarray, seq: int) -> int:
    """Linear block index (x fastest) of the ``seq``-th block in cluster order (Python twin of the engine's)."""
    size = cluster_size_of(launch)
    if size <= 1:
        return seq
    gx, gy = int(launch[S.L_NCTAID_X]), int(launch[S.L_NCTAID_Y])
    cx, cy, cz = cluster_dims_of(launch)
    q, r = divmod(seq, size)
    ncx, ncy = gx // cx, gy // cy
    bx = (q % ncx) * cx + r % cx
    by = ((q // ncx) % ncy) * cy + (r // cx) % cy
    bz = (q // (ncx * ncy)) * cz + r // (cx * cy)
    return bx + gx * (by + gy * bz)
