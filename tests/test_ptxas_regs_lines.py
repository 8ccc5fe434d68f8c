"""The committed ``// gpusim: regs=T sm_80=A sm_89=B sm_90=C kernel=NAME`` lines (issue 11, point 3).

scripts/regen_regs.sh writes them into every shipped programs/**/*.ptx from ``ptxas -v`` at each architecture
(T: at the PTX's own ``.target``). Nothing here calls ptxas: the counts are checked against the committed SASS
listings (programs/sass/sm_XX/NAME.sass), whose sm_80 and sm_89 sections carry ptxas's count as
``SHI_REGISTERS=N``; the sm_90 listings do not, and there the count is the highest register the code names
plus one plus the two ptxas reserves (the rule checked on the sm_80 and sm_89 listings first).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from gpusim import GPU
from gpusim.arch.config import load_config
from gpusim.programs.catalog import programs_dir
from gpusim.ptx.parser import parse_file, parse_ptx

ARCHS = ("sm_80", "sm_89", "sm_90")
SHIPPED = sorted(p for p in programs_dir().rglob("*.ptx"))


def _arch_number(arch: str) -> int:
    return int(arch.split("_")[1])


def _listing_sections(path) -> dict[str, str]:
    """Kernel name -> its section of an nvdisasm listing."""
    parts = re.split(r"//-+ \.text\.", path.read_text())[1:]
    return {part.split()[0]: part for part in parts}


def _line_counts(ptx) -> tuple[dict, dict]:
    module = parse_file(ptx)
    return module.gpusim_regs, module.gpusim_regs_arch


def test_the_shipped_ptx_files_are_found():
    names = {p.relative_to(programs_dir()).as_posix() for p in SHIPPED}
    assert {"saxpy.ptx", "labs/tensor_intensity.ptx", "codegen/gemv_sass_order.ptx"} <= names


@pytest.mark.parametrize("ptx", SHIPPED, ids=lambda p: p.relative_to(programs_dir()).as_posix())
def test_every_shipped_kernel_carries_a_count_per_architecture(ptx):
    module = parse_file(ptx)
    kernels = [name for name, f in module.functions.items() if f.is_entry]
    assert kernels, f"{ptx} defines no kernel"
    target = _arch_number(module.target.rstrip("a"))
    for name in kernels:
        assert name in module.gpusim_regs, f"{ptx.name}: kernel {name} has no '// gpusim: regs=' line"
        # ptxas compiles a PTX only for architectures at or above its .target: those are the ones in the line
        expected = {arch for arch in ARCHS if _arch_number(arch) >= target}
        assert set(module.gpusim_regs_arch[name]) == expected, name
        # the plain count is ptxas's at the .target (what a config of another architecture takes)
        if module.target in ARCHS:
            assert module.gpusim_regs[name] == module.gpusim_regs_arch[name][module.target]


@pytest.mark.parametrize("arch", ["sm_80", "sm_89"])
def test_counts_equal_the_register_counts_stored_in_the_sass_listings(arch):
    listings = sorted((programs_dir() / "sass" / arch).glob("*.sass"))
    assert len(listings) >= 20
    checked = 0
    for listing in listings:
        _, per_arch = _line_counts(programs_dir() / f"{listing.stem}.ptx")
        for name, section in _listing_sections(listing).items():
            stored = int(re.search(r'SHI_REGISTERS=(\d+)', section).group(1))
            assert per_arch[name][arch] == stored, (listing.name, name)
            checked += 1
    assert checked >= 20


def _highest_register_plus_reserved(section: str) -> int:
    """ptxas's count implied by a listing: the highest R register named (R4.64 names R4 and R5), plus one,
    plus the two registers ptxas reserves."""
    named = [int(r) for r in re.findall(r"\bR(\d+)\b", section)]
    named += [int(r) + 1 for r in re.findall(r"\bR(\d+)\.64\b", section)]
    return max(named) + 1 + 2


FP32_KERNELS = ("saxpy", "vecadd", "gemv", "matmul_tiled", "transpose_padded", "stencil2d")


@pytest.mark.parametrize("name", FP32_KERNELS)
def test_sm_90_counts_equal_what_the_sm_90_listing_implies(name):
    _, per_arch = _line_counts(programs_dir() / f"{name}.ptx")
    for arch in ("sm_80", "sm_89"):     # the rule, where the listing also stores the count
        section = _listing_sections(programs_dir() / "sass" / arch / f"{name}.sass")[name]
        assert _highest_register_plus_reserved(section) == int(re.search(r"SHI_REGISTERS=(\d+)", section).group(1))
    section = _listing_sections(programs_dir() / "sass" / "sm_90" / f"{name}.sass")[name]
    assert per_arch[name]["sm_90"] == _highest_register_plus_reserved(section)


@pytest.mark.parametrize("config", ["a100", "rtx4090", "h100-sxm", "v100", "teaching"])
def test_a_load_takes_the_count_of_its_configs_architecture(config, monkeypatch):
    monkeypatch.setenv("GPUSIM_NO_PTXAS", "1")          # the committed lines, not a local ptxas
    cfg = load_config(config)
    arch = f"sm_{cfg.cc_major}{cfg.cc_minor}"
    plain, per_arch = _line_counts(programs_dir() / "gemv.ptx")
    regs, source = GPU(config).load(str(programs_dir() / "gemv.ptx"))["gemv"].registers_per_thread()
    if arch in per_arch["gemv"]:
        assert regs == per_arch["gemv"][arch]
        assert f"its {arch}= count" in source
    else:                                               # sm_70: no ptxas 13 for it; the .target's count
        assert regs == plain["gemv"]
        assert "plain regs=" in source and f"no {arch}= count" in source


def test_a_kernel_without_its_architecture_in_the_line_falls_back_to_plain_regs(monkeypatch):
    monkeypatch.setenv("GPUSIM_NO_PTXAS", "1")
    text = ("// gpusim: regs=24 sm_90=40 kernel=k\n// gpusim: regs=7\n.version 8.0\n.target sm_80\n"
            ".address_size 64\n.visible .entry k() { ret; }\n.visible .entry j() { ret; }\n")
    assert parse_ptx(text).gpusim_regs == {"k": 24, "*": 7}
    h100 = GPU("h100-sxm").load_ptx(text)
    a100 = GPU("a100").load_ptx(text)
    assert h100["k"].registers_per_thread()[0] == 40
    assert a100["k"].registers_per_thread()[0] == 24
    assert h100["j"].registers_per_thread() == (7, "'// gpusim: regs=' line in the PTX")


def test_a_run_says_its_registers_came_from_the_line_for_its_architecture():
    gpu = GPU("a100", codegen="none")
    kernel = gpu.load(str(programs_dir() / "saxpy.ptx"))["saxpy"]
    _, per_arch = _line_counts(programs_dir() / "saxpy.ptx")
    n = 64
    x = gpu.to_device(np.ones(n, np.float32))
    y = gpu.to_device(np.ones(n, np.float32))
    run = kernel[1, 64](np.int32(n), np.float32(2), x, y)
    assert run.regs_per_thread == per_arch["saxpy"]["sm_80"]
    assert run.regs_source == "'// gpusim: regs=' line in the PTX, its sm_80= count"
