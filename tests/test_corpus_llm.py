"""The LLM-training kernel corpus (tests/corpus_llm): kernels in the style of hand-written LLM-training code,
written here from the algorithms (layer norm forward/backward with cooperative-group reductions, fused
residual + layer norm, online softmax, cross-entropy, GELU on 128-bit packets of bf16, AdamW, bias gradient
with atomics, causal attention with the online softmax), compiled by nvcc for sm_90 (NAME.ptx, run on an
H100 slice) and sm_80 (NAME.sm_80.ptx, an A100 slice) by scripts/regen_corpus_llm.sh, each checked against
numpy on the functional and the timed path.

Tolerances are derived (u = 2^-24, Higham's gamma_k = k u / (1 - k u)): a sum of k float32 terms in any
order is within gamma_k * sum |terms|; a product or quotient adds u relative per rounding; the CUDA math
library's documented maximum errors (CUDA C Programming Guide, "Mathematical Functions": expf 2 ulp, logf
1 ulp, tanhf 2 ulp, rsqrtf 2 ulp; one ulp is at most 2u relative) add 4u or 2u relative; a function's
argument error dx moves exp(x) by exp(x) dx and tanh(x) by at most dx. Each bound below is written out.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import gpusim
from tests.test_corpus import U, assert_close, assert_equal, gamma

CORPUS = Path(__file__).parent / "corpus_llm"
ARCHS = {"sm_90": ("h100-sxm", ""), "sm_80": ("a100", ".sm_80")}
RNG_SEED = 27


class Ctx:
    def __init__(self, arch: str, timing: bool, strip_regs: bool = False):
        config, self.suffix = ARCHS[arch]
        self.gpu = gpusim.GPU(config, sms=2)
        self.timing = timing
        self.strip_regs = strip_regs
        self.rng = np.random.default_rng(RNG_SEED)
        self.modules: dict = {}

    def kernel(self, file: str, name: str):
        if file not in self.modules:
            path = CORPUS / f"{file}{self.suffix}.ptx"
            if self.strip_regs:        # gpusim's own register allocation (and its spill code), not ptxas's count
                text = re.sub(r"^// gpusim: regs=.*\n", "", path.read_text(), flags=re.MULTILINE)
                self.modules[file] = self.gpu.load_ptx(text, str(path))
            else:
                self.modules[file] = self.gpu.load(path)
        return self.modules[file][name]

    def launch(self, file, name, grid, block, *args, shared=0):
        run = self.gpu.launch(self.kernel(file, name), grid, block, list(args), shared_bytes=shared,
                              timing=self.timing)
        if self.timing:
            assert run.cycles > 0
        return run

    def dev(self, array):
        return self.gpu.to_device(np.ascontiguousarray(array))


def _f64(a):
    return np.asarray(a, dtype=np.float64)


# ------------------------------------------------------------------------------------------- layer norm
N_ROWS, C = 6, 80      # C not a multiple of 32: the warp loops' tails run


def _layernorm_reference(x32, w32, b32):
    """(y, mean, rstd, bounds) in float64 from float32 inputs, with the derived error bounds."""
    x, w, b = _f64(x32), _f64(w32), _f64(b32)
    mean = x.mean(axis=1)
    d = x - mean[:, None]
    var = (d * d).mean(axis=1)
    rstd = 1 / np.sqrt(var + 1e-5)
    y = d * rstd[:, None] * w + b
    # mean: C terms per row (lane sums, then the 5-level tree), then / C: gamma(C + 1) * mean |x|
    mean_err = gamma(C + 1) * np.abs(x).mean(axis=1)
    # rstd: the sum of squares has positive terms (C + 1 roundings with the square), / C, + eps, rsqrtf
    # (2 ulp): relative gamma(C + 3) / 2 (a square root halves it) + 4u; m's error moves var only to
    # second order (sum (x - m) = 0)
    rstd_rel = gamma(C + 3) / 2 + 4 * U + gamma(2)
    # y = ((x - m) s) w + b: (x - m) carries m's error, then 3 roundings (-, *, *, fma with b)
    y_err = (np.abs(w) * rstd[:, None] * ((np.abs(d) * (rstd_rel + gamma(3))) + mean_err[:, None])
             + gamma(2) * (np.abs(d * rstd[:, None] * w) + np.abs(b)))
    return y, mean, rstd, y_err, mean_err, rstd_rel * rstd


def _layernorm_forward(ctx: Ctx):
    x = ctx.rng.uniform(-2, 3, (N_ROWS, C)).astype(np.float32)
    w = ctx.rng.uniform(0.5, 1.5, C).astype(np.float32)
    b = ctx.rng.uniform(-1, 1, C).astype(np.float32)
    out, mean, rstd = ctx.gpu.zeros((N_ROWS, C)), ctx.gpu.zeros(N_ROWS), ctx.gpu.zeros(N_ROWS)
    ctx.launch("layernorm", "layernorm_forward", 2, 128, out, mean, rstd, ctx.dev(x), ctx.dev(w), ctx.dev(b),
               np.int32(N_ROWS), np.int32(C))
    y, m, s, y_err, m_err, s_err = _layernorm_reference(x, w, b)
    assert_close("layernorm out", out.get(), y, y_err)
    assert_close("layernorm mean", mean.get(), m, m_err)
    assert_close("layernorm rstd", rstd.get(), s, s_err)


def _fused_residual_layernorm(ctx: Ctx):
    a = ctx.rng.uniform(-2, 2, (N_ROWS, C)).astype(np.float32)
    b_in = ctx.rng.uniform(-1, 1, (N_ROWS, C)).astype(np.float32)
    w = ctx.rng.uniform(0.5, 1.5, C).astype(np.float32)
    b = ctx.rng.uniform(-1, 1, C).astype(np.float32)
    residual, out = ctx.gpu.zeros((N_ROWS, C)), ctx.gpu.zeros((N_ROWS, C))
    mean, rstd = ctx.gpu.zeros(N_ROWS), ctx.gpu.zeros(N_ROWS)
    ctx.launch("layernorm", "fused_residual_layernorm", 2, 128, residual, out, mean, rstd, ctx.dev(a),
               ctx.dev(b_in), ctx.dev(w), ctx.dev(b), np.int32(N_ROWS), np.int32(C))
    r = a + b_in                                        # float32 addition, correctly rounded: exact match
    assert_equal("residual", residual.get(), r)
    y, m, s, y_err, m_err, s_err = _layernorm_reference(r, w, b)
    assert_close("fused layernorm out", out.get(), y, y_err)
    assert_close("fused layernorm rstd", rstd.get(), s, s_err)


def _layernorm_backward(ctx: Ctx):
    x = ctx.rng.uniform(-2, 2, (N_ROWS, C)).astype(np.float32)
    w = ctx.rng.uniform(0.5, 1.5, C).astype(np.float32)
    dy = ctx.rng.uniform(-1, 1, (N_ROWS, C)).astype(np.float32)
    mean = x.mean(axis=1, dtype=np.float64).astype(np.float32)            # inputs: exact as given
    rstd = (1 / np.sqrt(x.var(axis=1, dtype=np.float64) + 1e-5)).astype(np.float32)
    dinp, dweight, dbias = ctx.gpu.zeros((N_ROWS, C)), ctx.gpu.zeros(C), ctx.gpu.zeros(C)
    ctx.launch("layernorm", "layernorm_backward", 1, 256, dinp, dweight, dbias, ctx.dev(dy), ctx.dev(x),
               ctx.dev(w), ctx.dev(mean), ctx.dev(rstd), np.int32(N_ROWS), np.int32(C))
    m, s = _f64(mean)[:, None], _f64(rstd)[:, None]
    norm = (_f64(x) - m) * s                            # norm: 2 roundings, relative gamma(2)
    dnorm = _f64(w) * _f64(dy)                          # 1 rounding
    dnorm_mean = dnorm.mean(axis=1, keepdims=True)
    dnorm_norm_mean = (dnorm * norm).mean(axis=1, keepdims=True)
    dx = (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s
    # the two means: C + 2 roundings over their terms (each term 1-3 roundings); dx: 4 more roundings over
    # the magnitudes of its terms
    mean_err = gamma(C + 2) * np.abs(dnorm).mean(axis=1, keepdims=True)
    nn_err = gamma(C + 5) * np.abs(dnorm * norm).mean(axis=1, keepdims=True)
    dx_err = s * (gamma(6) * (np.abs(dnorm) + np.abs(dnorm_mean) + np.abs(norm * dnorm_norm_mean))
                  + mean_err + np.abs(norm) * nn_err)
    assert_close("layernorm dinp", dinp.get(), dx, dx_err)
    # dweight / dbias: N_ROWS atomic additions in any order, each term 2 (dbias 0) roundings
    assert_close("layernorm dbias", dbias.get(), _f64(dy).sum(axis=0), gamma(N_ROWS) * np.abs(_f64(dy)).sum(axis=0))
    assert_close("layernorm dweight", dweight.get(), (norm * _f64(dy)).sum(axis=0),
                 gamma(N_ROWS + 3) * np.abs(norm * _f64(dy)).sum(axis=0))


# ------------------------------------------------------------------------------------------- softmax
def _online_softmax(ctx: Ctx):
    rows, cols = 5, 70
    x = ctx.rng.uniform(-4, 4, (rows, cols)).astype(np.float32)
    out = ctx.gpu.zeros((rows, cols))
    ctx.launch("softmax", "online_softmax", 2, 128, out, ctx.dev(x), np.int32(rows), np.int32(cols))
    e = np.exp(_f64(x) - _f64(x).max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True)
    # every exponential: expf's 4u plus its argument's rounding u |x - max| (<= 8 here); a running sum
    # passes through at most cols / 32 + 5 rescalings (each one such exponential and a rounding) and
    # cols + 5 additions; the output: one more exponential, the reciprocal and the product
    spread = float((x.max(axis=1) - x.min(axis=1)).max())
    per_exp = 4 * U + U * spread
    steps = cols // 32 + 1 + 5
    rel = gamma(cols + 5) + steps * (per_exp + U) + per_exp + gamma(2)
    assert_close("online softmax", out.get(), expected, rel * expected)


def _crossentropy(ctx: Ctx):
    n, v = 40, 16
    probs = ctx.rng.uniform(0.01, 0.99, (n, v)).astype(np.float32)
    targets = ctx.rng.integers(0, v, n).astype(np.int32)
    losses = ctx.gpu.zeros(n)
    ctx.launch("softmax", "crossentropy_forward", 1, 64, losses, ctx.dev(probs), ctx.dev(targets), np.int32(n),
               np.int32(v))
    expected = -np.log(_f64(probs[np.arange(n), targets]))
    assert_close("cross-entropy", losses.get(), expected, 2 * U * np.abs(expected))   # logf: 1 ulp


# ------------------------------------------------------------------------------------------- elementwise
def _bf16_bits_to_f64(bits: np.ndarray) -> np.ndarray:
    return _f64((bits.astype(np.uint32) << 16).view(np.float32))


def _gelu_bf16(ctx: Ctx):
    n = 512                                             # 64 threads x 8 values
    bits = (ctx.rng.uniform(-3, 3, n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    out = ctx.gpu.zeros(n, np.uint16)
    ctx.launch("elementwise", "gelu_forward_bf16", 1, 64, out, ctx.dev(bits), np.int32(n))
    x = _bf16_bits_to_f64(bits)                         # bf16 inputs are exact in float and float64
    k = np.sqrt(2 / np.pi)
    inner = k * (x + 0.044715 * x ** 3)
    t = np.tanh(inner)
    y = 0.5 * x * (1 + t)
    # float part: tanh's argument has 5 roundings (relative to its magnitudes), tanhf 2 ulp (4u |t|), and
    # 3 roundings after it; then the result is rounded to bf16 (8 significand bits: 2^-8 relative, to
    # nearest), which the float error can at most push past one rounding boundary
    inner_err = gamma(5) * k * (np.abs(x) + 0.044715 * np.abs(x) ** 3)
    float_err = 0.5 * np.abs(x) * (inner_err + 4 * U * np.abs(t)) + gamma(3) * 0.5 * np.abs(x) * (1 + np.abs(t))
    bound = 2.0 ** -8 * (np.abs(y) + float_err) + float_err
    assert_close("gelu bf16", _bf16_bits_to_f64(out.get()), y, bound)


def _adamw(ctx: Ctx):
    n = 300
    params = ctx.rng.uniform(-1, 1, n).astype(np.float32)
    m0 = ctx.rng.uniform(-0.1, 0.1, n).astype(np.float32)
    v0 = ctx.rng.uniform(0, 0.01, n).astype(np.float32)
    g = ctx.rng.uniform(-1, 1, n).astype(np.float32)
    lr, b1, b2, eps, wd, step = 1e-3, 0.9, 0.999, 1e-8, 0.01, 3
    c1, c2 = np.float32(1 - b1 ** step), np.float32(1 - b2 ** step)
    dp, dm, dv = ctx.dev(params), ctx.dev(m0), ctx.dev(v0)
    ctx.launch("elementwise", "adamw", 2, 256, dp, dm, dv, ctx.dev(g), np.int64(n), np.float32(lr),
               np.float32(b1), np.float32(b2), c1, c2, np.float32(eps), np.float32(wd))
    f = {name: _f64(np.float32(value)) for name, value in dict(lr=lr, b1=b1, b2=b2, eps=eps, wd=wd).items()}
    one_b1, one_b2 = _f64(np.float32(1 - f["b1"])), _f64(np.float32(1 - f["b2"]))   # 1 - beta: rounded once
    m = f["b1"] * _f64(m0) + one_b1 * _f64(g)
    v = f["b2"] * _f64(v0) + one_b2 * _f64(g) ** 2
    m_abs = f["b1"] * np.abs(_f64(m0)) + one_b1 * np.abs(_f64(g))
    v_abs = f["b2"] * _f64(v0) + one_b2 * _f64(g) ** 2
    assert_close("adamw m", dm.get(), m, gamma(3) * m_abs)
    assert_close("adamw v", dv.get(), v, gamma(4) * v_abs)
    m_hat, v_hat = m / _f64(c1), v / _f64(c2)
    denominator = np.sqrt(v_hat) + f["eps"]
    p = _f64(params) - f["lr"] * (m_hat / denominator + f["wd"] * _f64(params))
    # m_hat: m's error + 1 rounding; sqrt(v_hat): half of v's relative error + 2 roundings; the quotient,
    # the sum, the product with lr and the subtraction: 4 roundings over their magnitudes
    ratio_rel = (gamma(3) * m_abs / np.maximum(np.abs(m), 1e-30) + U) + (gamma(4) / 2 + 3 * U)
    update_abs = f["lr"] * (np.abs(m_hat) / denominator * (1 + ratio_rel) + f["wd"] * np.abs(_f64(params)))
    bound = gamma(4) * (np.abs(_f64(params)) + update_abs) + f["lr"] * np.abs(m_hat) / denominator * ratio_rel
    assert_close("adamw params", dp.get(), p, bound)


def _bias_backward(ctx: Ctx):
    n, cols, rows_per_block = 50, 40, 16
    dout = ctx.rng.uniform(-1, 1, (n, cols)).astype(np.float32)
    dbias = ctx.gpu.zeros(cols)
    block = (16, 8)
    grid = ((cols + 15) // 16, (n + rows_per_block - 1) // rows_per_block)
    ctx.launch("elementwise", "bias_backward", grid, block, dbias, ctx.dev(dout), np.int32(n), np.int32(cols),
               np.int32(rows_per_block), shared=block[0] * block[1] * 4)
    # n terms per column, summed in any order (per thread, the shared tree, then atomics): gamma(n)
    assert_close("bias gradient", dbias.get(), _f64(dout).sum(axis=0), gamma(n) * np.abs(_f64(dout)).sum(axis=0))


# ------------------------------------------------------------------------------------------- attention
def _causal_attention(ctx: Ctx):
    b, nh, t, hs = 1, 2, 12, 32
    q = ctx.rng.uniform(-1, 1, (b, nh, t, hs)).astype(np.float32)
    k = ctx.rng.uniform(-1, 1, (b, nh, t, hs)).astype(np.float32)
    v = ctx.rng.uniform(-1, 1, (b, nh, t, hs)).astype(np.float32)
    out = ctx.gpu.zeros((b, nh, t, hs))
    rows = b * nh * t
    ctx.launch("attention", "causal_attention", (rows + 3) // 4, 128, out, ctx.dev(q), ctx.dev(k), ctx.dev(v),
               np.int32(b), np.int32(t), np.int32(nh))
    scale = 1 / np.sqrt(hs)
    scores = np.einsum("bhid,bhjd->bhij", _f64(q), _f64(k)) * scale
    mask = np.tril(np.ones((t, t), bool))
    scores = np.where(mask, scores, -np.inf)
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    expected = p @ _f64(v)
    # a score: q scaled by rsqrtf (2 ulp: 4u) and a rounding, 32 products summed by the shuffle tree
    # (gamma(32 + 1)): absolute error ds <= gamma(34) * sum_d |q_d k_d| scale + 4u |s|; a weight p_j
    # moves by its two exponentials' arguments (2 ds) and, through the running rescaling (at most t steps,
    # each an expf with 4u and 2 roundings), 6u t relative; the normalised output then moves by twice that
    # relative change times the weighted mean of |v| (a convex combination), plus t + 2 roundings
    abs_scores = np.einsum("bhid,bhjd->bhij", np.abs(_f64(q)), np.abs(_f64(k))) * scale
    ds = (gamma(34) * abs_scores + 4 * U * np.abs(np.where(mask, scores, 0))).max(axis=-1)
    rel_p = 2 * ds + 6 * U * t + 4 * U
    mean_abs_v = p @ np.abs(_f64(v))
    bound = (2 * rel_p[..., None] + gamma(t + 2)) * mean_abs_v
    assert_close("causal attention", out.get(), expected, bound)


CASES = {
    "layernorm_forward": _layernorm_forward, "fused_residual_layernorm": _fused_residual_layernorm,
    "layernorm_backward": _layernorm_backward, "online_softmax": _online_softmax,
    "crossentropy_forward": _crossentropy, "gelu_forward_bf16": _gelu_bf16, "adamw": _adamw,
    "bias_backward": _bias_backward, "causal_attention": _causal_attention,
}


@pytest.mark.parametrize("arch", list(ARCHS))
@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
@pytest.mark.parametrize("name", list(CASES))
def test_llm_kernel_matches_numpy(name, timing, arch, monkeypatch):
    monkeypatch.setenv("GPUSIM_NO_PTXAS", "1")       # the committed '// gpusim: regs=' lines
    CASES[name](Ctx(arch, timing))


@pytest.mark.filterwarnings("ignore:gpusim. kernel .* are gpusim's estimate")
@pytest.mark.parametrize("name", ["layernorm_forward", "fused_residual_layernorm", "causal_attention"])
def test_without_ptxas_counts_the_allocation_and_its_spills_give_the_same_results(name, monkeypatch):
    """With no register count in the PTX and no ptxas, gpusim's own allocation counts the registers under the
    kernels' __launch_bounds__ (spilling to local memory above the cap, which tests/test_regalloc.py checks):
    the results are unchanged."""
    monkeypatch.setenv("GPUSIM_NO_PTXAS", "1")
    ctx = Ctx("sm_90", timing=True, strip_regs=True)
    CASES[name](ctx)
    file = {"causal_attention": "attention"}.get(name, "layernorm")
    kernel = ctx.kernel(file, name)
    assert kernel.registers_per_thread()[1].startswith("estimate")
    if name != "causal_attention":       # __launch_bounds__(1024, 2): at most 32 registers
        assert kernel.registers_per_thread()[0] <= 32
        # scheduled under that budget the values fit without spilling, as in ptxas's code for them
        # ("0 bytes spill stores" from ptxas -v, tests/data/regalloc_sass/layernorm.sass's header)
        assert not any(note.startswith("regalloc:") and "spilled" in note for note in kernel.program.codegen_notes)


def test_the_corpus_is_complete():
    sources = sorted(p.stem for p in CORPUS.glob("*.cu"))
    defined = set()
    for stem in sources:
        for suffix in ("", ".sm_80"):
            text = (CORPUS / f"{stem}{suffix}.ptx").read_text()
            assert "// gpusim: regs=" in text, f"{stem}{suffix}.ptx lacks ptxas's register counts"
            assert f".target {'sm_80' if suffix else 'sm_90'}" in text
            defined |= {line.split()[-1].rstrip("(") for line in text.splitlines()
                        if line.startswith(".visible .entry")}
    assert defined == set(CASES), f"kernels without a case: {defined - set(CASES)}; cases without a kernel: " \
                                  f"{set(CASES) - defined}"
