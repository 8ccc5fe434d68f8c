"""programs/labs/attention_hopper.cu (attn_flash3, the FlashAttention-3-style kernel: TMA producer warpgroup,
mbarrier pipeline, wgmma consumers with P from registers and V as an MN-major operand, TMA store of O) against
numpy on the functional and the timed engine, its tensor FLOPs and DRAM bytes against formulas, and its refusal on
a GPU without wgmma. Every expected value is derived here from numpy and the shapes, not from a run."""

import numpy as np
import pytest

from gpusim.api.gpu import GPU
from gpusim.errors import LaunchError
from gpusim.labs.attention import Attention, analytic_bytes, reference

HEAD_DIM = 64
TILE = 128                  # attn_flash3's Q tile and K / V tile


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("heads, n, causal", [(2, 256, False), (1, 384, False), (2, 384, True)])
def test_matches_numpy_within_fp16_rounding(timing, heads, n, causal):
    """P rounded to fp16 (u = 2^-11) once and O rounded to fp16 once bound the error by about 2 u max|v|; the
    fp32 sums (n terms) and scores add n 2^-24 max|v| and less: 4 u max|v| + n 2^-24 max|v| leaves room for both.
    n = 384 is 3 key tiles: an odd count (the two-way unrolled loop's tail) and a stage reused (its mbarriers'
    phase flips); causal masks the diagonal tile and skips the ones past it. The persistent grid has one block per
    SM (2 here) for 3 to 6 (head, Q tile) items, so a block computes several, and its Q buffers, stages and
    turns carry over from one to the next."""
    attention = Attention(GPU("h100-sxm", sms=2), n, heads, seed=3, causal=causal)
    expected = reference(attention.q, attention.k, attention.v, 1 / np.sqrt(HEAD_DIM), causal)
    v_max = float(np.abs(attention.v.astype(np.float64)).max())
    _, out = attention.fused_hopper(timing=timing)
    error = np.abs(out - expected).max()
    assert error <= (4 * 2.0 ** -11 + n * 2.0 ** -24) * v_max
    assert error > 0  # fp16 output: not bit-equal to float64, so really compared
    if causal:  # the first query sees only its own key: its output is v's first row
        assert np.abs(out[:, 0] - attention.v[:, 0]).max() <= 2.0 ** -11 * v_max


def test_tensor_flops_and_dram_bytes():
    """Non-causal: every (query, key) pair once in each product, 2 x 2 n^2 d FLOPs per head; causal: the Q tile b
    (rows 128 b ..) computes the key tiles 0 .. b, 2 x 2 x 128 x 128 x 64 FLOPs each. Either way Q, K, V and O
    cross DRAM once (8 n d bytes per head: K and V are reread from L2), within 5 %."""
    n, heads = 512, 2
    for causal in (False, True):
        attention = Attention(GPU("h100-sxm", sms=2), n, heads, causal=causal)
        run, _ = attention.fused_hopper()
        tiles = sum(b + 1 for b in range(n // TILE)) if causal else (n // TILE) ** 2
        flops = run.run.metrics["gpusim__tensor_flops_src_fp16_dst_fp32.sum"]
        assert flops == heads * tiles * 2 * 2 * TILE * TILE * HEAD_DIM
        assert run.dram_bytes == pytest.approx(heads * 4 * n * HEAD_DIM * 2, rel=0.05)
        assert analytic_bytes(n, heads)["attn_flash3"] == heads * 4 * n * HEAD_DIM * 2


def test_refused_without_wgmma():
    attention = Attention(GPU("a100", sms=1), 256, 1)
    with pytest.raises(LaunchError, match="needs wgmma"):
        attention.fused_hopper()
