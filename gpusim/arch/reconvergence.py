"""How a GPU reconverges diverged threads: ``GPU(..., reconvergence="ipdom" | "its")``.

* ``"ipdom"``: a SIMT stack, reconvergence at the immediate post-dominator (pre-Volta hardware, and the
  model textbooks teach): the lanes of a divergent branch run its paths one after the other and wait at
  the join. A thread that waits for a lane of its own warp held at a join waits forever.
* ``"its"``: independent thread scheduling (Volta, compute capability 7.0, and later): the same order and
  reconvergence points while threads do not wait for each other, and per-thread progress when they do
  (gpusim/engine/semantics/its.py).

The default is ``"ipdom"`` for every architecture, including cc >= 7.0, where the hardware schedules
threads independently. Reasons (docs/design.md, docs/kernels.md): a kernel whose threads do not wait for
lanes of their own warp runs identically under both (same instructions, cycles and metrics: tested on every
shipped program), so the default changes nothing there; "its" runs each diverged back edge through the
engine's slower general path; and IPDOM is the behaviour the labs and the SIMT-efficiency metrics explain.
A kernel that needs ITS (a spin lock inside one warp) stops at the cycle limit under "ipdom" with a report
that names the spinning and the waiting lanes and says to pass ``reconvergence="its"``.
"""

from __future__ import annotations

from gpusim.errors import ConfigError

RECONVERGENCE_MODES = ("ipdom", "its")


def default_reconvergence(config) -> str:
    """The mode a GPU of ``config`` gets when ``reconvergence`` is not given: ``"ipdom"`` for every compute
    capability (the module docstring says why)."""
    del config          # the same for every architecture, by choice
    return "ipdom"


def check_reconvergence(value, config) -> str:
    """The mode ``GPU(reconvergence=value)`` asks for (``None``: the architecture's default)."""
    if value is None:
        return default_reconvergence(config)
    if value not in RECONVERGENCE_MODES:
        raise ConfigError(f"reconvergence must be one of {', '.join(map(repr, RECONVERGENCE_MODES))} "
                          f"(or None for the architecture's default), got {value!r}", field="reconvergence")
    return value
