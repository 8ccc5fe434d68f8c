"""The SGEMM ladder of the validation suite (validation/kernels/sgemm_ladder.cu, case sgemm_a6000): every step of
Boehm's worklog is there in its numbering, each kernel computes C = alpha A B + beta C over the whole matrix when
launched with the runner's shape (validation.runner.SGEMM_SHAPES) on both the functional and the timed path, and
the shared memory each kernel declares is the one its tiles need."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from gpusim import GPU
from validation.cases import load_cases
from validation.runner import KERNEL_DIR, SGEMM_SHAPES

LADDER = KERNEL_DIR / "sgemm_ladder.ptx"
NEW_STEPS = ["sgemm_bank_linear", "sgemm_bank_offset", "sgemm_autotuned", "sgemm_double_buffering"]


@pytest.fixture(scope="module")
def ladder():
    """One GPU and the ladder's module, loaded (and code-generated) once for every test here."""
    gpu = GPU("a6000", sms=1)
    return gpu, gpu.load(str(LADDER))


def _case():
    return {case.name: case for case in load_cases()}["sgemm_a6000"]


def test_the_case_has_every_step_of_the_article_in_order():
    points = _case().points
    steps = [int(point["label"].split(":")[0]) for point in points]
    assert steps == list(range(1, 12))
    text = Path(LADDER).read_text()
    for point in points:
        assert point["kernel"] in SGEMM_SHAPES, point["kernel"]
        assert f".entry {point['kernel']}(" in text


@pytest.mark.parametrize("kernel", NEW_STEPS)
@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
def test_new_ladder_steps_compute_the_gemm(ladder, kernel, timing):
    """The whole 256 x 256 C (several block tiles, 8 double-buffered K steps for step 11) against numpy in
    float64, with alpha and beta both non-trivial, launched as the runner launches the case's points."""
    n = 256
    block, rows, cols, x_rows = SGEMM_SHAPES[kernel]
    assert not x_rows
    rng = np.random.default_rng(11)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = rng.standard_normal((n, n), dtype=np.float32)
    gpu, module = ladder
    k = module[kernel]
    dc = gpu.to_device(c)
    gpu.launch(k, grid=(n // cols, n // rows), block=block, timing=timing,
               args=[np.int32(n), np.float32(1.5), gpu.to_device(a), gpu.to_device(b), np.float32(-0.5), dc])
    want = 1.5 * (a.astype(np.float64) @ b.astype(np.float64)) - 0.5 * c
    np.testing.assert_allclose(dc.get().reshape(n, n), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("kernel, floats", [
    ("sgemm_bank_linear", 8 * 128 + 8 * 128),          # A^T 8 x 128, B 8 x 128 (permuted, same size)
    ("sgemm_bank_offset", 8 * 128 + 8 * (128 + 5)),    # B rows padded by 5 words
    ("sgemm_autotuned", 16 * 128 + 16 * 128),          # BK = 16
    ("sgemm_double_buffering", 2 * (16 * 128 + 16 * 256)),   # two stages of A^T 16 x 128 and B 16 x 256
])
def test_new_ladder_steps_declare_their_tiles_shared_memory(ladder, kernel, floats):
    assert int(ladder[1][kernel].program.shared_static_bytes) == 4 * floats


def test_the_a6000_config_takes_ptxas_counts_for_sm_86(ladder):
    """The a6000 config (GA102, compute capability 8.6) takes each step's registers per thread from the sm_86
    count of the ladder's '// gpusim: regs=' lines (``ptxas -v -arch=sm_86``, written by validation/regen.sh),
    not from the plain count (ptxas at the PTX's .target, sm_80): for the linearised bank-conflict step ptxas
    allocates 127 registers on sm_86 and 101 on sm_80."""
    line = next(line for line in LADDER.read_text().splitlines()
                if line.startswith("// gpusim: regs=") and line.endswith("kernel=sgemm_bank_linear"))
    counts = dict(re.findall(r"(regs|sm_\d+)=(\d+)", line))
    assert counts["sm_86"] != counts["regs"]
    _, module = ladder
    regs, source = module["sgemm_bank_linear"].registers_per_thread()
    assert regs == int(counts["sm_86"]) and "sm_86" in source
