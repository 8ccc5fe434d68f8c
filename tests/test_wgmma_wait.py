"""``wgmma.wait_group`` is warpgroup-collective (semantics/wgmma_groups.py, sm/warpgroup.py): a warp's wait
completes only once every warp of its warpgroup has committed the groups it waits for, and never waits for
another warpgroup.

The kernel: each warp whose bit is set in ``mask`` spins ``spin`` iterations, then every warp reads a shared
flag (0), commits an (empty) wgmma group and waits for it; after its wait, warp ``writer`` sets the flag to 1;
each thread stores the flag value it read. If the writer's wait completed before the spinning warps of its
warpgroup committed, they would read 1.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpusim

PTX = """
// gpusim: regs=16
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p_out, .param .u32 p_mask, .param .u32 p_writer, .param .u32 p_spin)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .reg .pred %p<4>;
  .shared .align 4 .b32 flag;
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;
  setp.ne.u32 %p1, %r1, 0;
  mov.u32 %r9, 0;
  @!%p1 st.shared.u32 [flag], %r9;
  bar.sync 0;
  ld.param.u32 %r3, [p_mask];
  shr.u32 %r3, %r3, %r2;
  and.b32 %r3, %r3, 1;
  ld.param.u32 %r4, [p_spin];
  mul.lo.u32 %r4, %r4, %r3;
  mov.u32 %r5, 0;
  setp.ge.u32 %p2, %r5, %r4;
  @%p2 bra $DONE;
$SPIN:
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p2, %r5, %r4;
  @%p2 bra $SPIN;
$DONE:
  ld.shared.u32 %r6, [flag];
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ld.param.u32 %r7, [p_writer];
  setp.ne.u32 %p3, %r2, %r7;
  mov.u32 %r8, 1;
  @!%p3 st.shared.u32 [flag], %r8;
  ld.param.u64 %rd1, [p_out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r6;
  ret;
}
"""

SPIN = 2000
"""spin iterations of the lagging warps: thousands of cycles, far past the writer's own few dozen"""


@pytest.fixture(scope="module")
def kernel():
    gpu = gpusim.GPU("h100-sxm")
    return gpu, gpu.load_ptx(PTX, name="wgmma_wait.ptx")["k"]


def _flags_read(gpu, kernel, threads, mask, writer, timing):
    out = gpu.zeros(threads, np.uint32)
    gpu.launch(kernel, 1, threads, [out, mask, writer, SPIN], timing=timing)
    flags = out.copy_to_host().reshape(-1, 32)
    assert (flags == flags[:, :1]).all()          # a warp's lanes read the flag together
    return flags[:, 0].tolist()


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
def test_a_wait_completes_only_after_its_warpgroups_lagging_warps_commit(kernel, timing):
    gpu, k = kernel
    assert _flags_read(gpu, k, 128, 0b1110, 0, timing) == [0, 0, 0, 0]


def test_a_wait_does_not_wait_for_another_warpgroup(kernel):
    """Warp 4 (warpgroup 1, no lagging warp) passes its wait and sets the flag while warps 1-3 of warpgroup 0
    still spin: they read 1 (timed; the functional path's order decides nothing here)."""
    gpu, k = kernel
    assert _flags_read(gpu, k, 256, 0b1110, 4, True) == [0, 1, 1, 1, 0, 0, 0, 0]
