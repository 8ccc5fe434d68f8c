"""Tests of gpusim.arch.config: shipped configs against the reference figures, validation, overrides, slicing."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim.arch.config import FIELDS, SCHEDULER_POLICIES, TABLES, WARP_SIZE, GPUConfig, list_configs, load_config
from gpusim.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
CONFIG_DIR = ROOT / "configs"
SHIPPED = ["a100", "h100-sxm", "h200", "rtx4090", "teaching", "v100"]

# gpu-specs.md, "Limits per compute capability": warps, blocks, max shared/SM KB, carveouts KB,
# max shared/block KB, allocation unit B, reserved B
LIMITS_BY_CC = {
    "7.0": (64, 32, 96, [0, 8, 16, 32, 64, 96], 96, 256, 0),
    "8.0": (64, 32, 164, [0, 8, 16, 32, 64, 100, 132, 164], 163, 128, 1024),
    "8.9": (48, 24, 100, [0, 8, 16, 32, 64, 100], 99, 128, 1024),
    "9.0": (64, 32, 228, [0, 8, 16, 32, 64, 100, 132, 164, 196, 228], 227, 128, 1024),
}
# gpu-specs.md chips table: config -> (cc, SMs, FP32 peak TF, dense tensor TF, DRAM GB/s, L2 MB, L1+shared KB)
CHIPS = {
    "h100-sxm": ("9.0", 132, 66.9, None, 3350, 50, 256),
    # h200's L2: 60 MiB, cudaDevAttrL2CacheSize read on an H200 (validation/measured/h200.json)
    "h200": ("9.0", 132, 67.0, None, 4800, 60, 256),
    "a100": ("8.0", 108, 19.5, 312, 2039, 40, 192),
    "v100": ("7.0", 80, 15.7, 125, 900, 6, 128),
    "rtx4090": ("8.9", 128, 82.6, 165, 1008, 72, 128),
}
SOURCE_KEYS = (r"\b(PG|BPG|OCC|VTG|MT4G|TK|GSIM|ASIM|AZ|GL|NV|DS3)\b|R2-(HBM2|HBM3|GDDR6)\b|Ramulator 2"
               r"|gpu-specs|CUDA Graphs blog|estimate|calibrated|simulation limit|ptxas control bits"
               r"|forums\.developer\.nvidia\.com|measured \(validation/measured/\w+\.json")


def test_list_configs_names_every_shipped_file():
    assert set(SHIPPED) <= set(list_configs())
    assert set(list_configs()) == {path.stem for path in CONFIG_DIR.glob("*.toml")}


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_config_loads_and_records_chip(name):
    config = load_config(name)
    assert config.name == name
    assert config.chip_sms == config.sms
    assert config.chip_l2_slices == config.l2_slices and config.chip_dram_channels == config.dram_channels
    assert config.warp_size == WARP_SIZE == 32
    assert config.scheduler in SCHEDULER_POLICIES


@pytest.mark.parametrize("name", SHIPPED)
def test_measured_values_cite_a_measurement_file_that_exists(name):
    """A value 'measured (validation/measured/F.json, ...)' names a file validation/hardware.py wrote on a real GPU."""
    root = CONFIG_DIR.parent
    for number, line in enumerate((CONFIG_DIR / f"{name}.toml").read_text().splitlines(), 1):
        for cited in re.findall(r"measured \((validation/measured/\w+\.json)", line):
            assert (root / cited).is_file(), f"{name}.toml:{number} cites {cited}, which does not exist"


@pytest.mark.parametrize("name", SHIPPED)
def test_every_value_cites_a_source(name):
    for number, line in enumerate((CONFIG_DIR / f"{name}.toml").read_text().splitlines(), 1):
        match = re.match(r"\s*(\w+)\s*=", line)
        if not match or match.group(1) in ("name", "description"):
            continue
        comment = line.split("#", 1)[1] if "#" in line else ""
        assert re.search(SOURCE_KEYS, comment), f"{name}.toml:{number} cites no source: {line}"


@pytest.mark.parametrize("name", [name for name in SHIPPED if name != "teaching"])
def test_real_chip_matches_reference_tables(name):
    config = load_config(name)
    cc, sms, fp32_tf, tensor_tf, dram_gbs, l2_mb, l1_shared_kb = CHIPS[name]
    warps, blocks, shared_sm_kb, carveouts, shared_block_kb, unit, reserved = LIMITS_BY_CC[cc]
    assert config.compute_capability == cc and config.sms == sms
    assert config.peak_fp32_flops == pytest.approx(fp32_tf * 1e12, rel=0.005)
    if tensor_tf is not None:
        assert config.peak_tensor_flops == pytest.approx(tensor_tf * 1e12, rel=0.01)
    assert config.dram_bandwidth_gbs == dram_gbs
    assert config.l2_bytes == l2_mb * 2**20
    assert config.l1_shared_bytes_per_sm == l1_shared_kb * 1024
    assert (config.max_warps_per_sm, config.max_blocks_per_sm) == (warps, blocks)
    assert config.max_shared_bytes_per_sm == shared_sm_kb * 1024
    assert list(config.shared_carveouts_kb) == carveouts
    assert config.max_shared_bytes_per_block == shared_block_kb * 1024
    assert config.default_max_shared_bytes_per_block == 48 * 1024
    assert config.shared_allocation_unit_bytes == unit
    assert config.shared_reserved_bytes_per_block == reserved
    assert (config.registers_per_sm, config.max_registers_per_block) == (65536, 65536)
    assert (config.max_registers_per_thread, config.register_allocation_unit) == (255, 256)
    assert (config.max_threads_per_block, config.shared_banks, config.shared_bank_bytes) == (1024, 32, 4)


def test_h100_tensor_peak_at_the_clock_nvidia_quotes():
    # gpu-specs: the 989.4 TF dense tensor peak implies 1830 MHz, with 4096 FLOP/clock/SM
    config = load_config("h100-sxm")
    assert config.tensor_flops_per_cycle_per_sm * config.sms * 1830e6 == pytest.approx(989.4e12, rel=0.001)


def test_derived_rates_follow_their_formulas():
    config = load_config("h100-sxm")
    assert config.clock_hz == config.core_clock_mhz * 1e6
    assert config.dram_bytes_per_cycle == pytest.approx(3350e9 / 1980e6)
    assert config.dram_bytes_per_cycle_per_channel == pytest.approx(3350e9 / 1980e6 / config.dram_channels)
    assert config.l2_bytes_per_cycle_per_slice == pytest.approx(config.l2_bytes_per_cycle / config.l2_slices)
    assert config.peak_fp64_flops == 2 * config.fp64_lanes_per_sm * config.sms * config.clock_hz
    assert config.warps_per_sub_partition == config.max_warps_per_sm // 4
    assert (config.cc_major, config.cc_minor) == (9, 0)
    set_bytes = config.l2_assoc * config.line_bytes
    assert config.l2_sets_per_slice * set_bytes * config.l2_slices == config.l2_bytes
    # ridge point, gpu-specs: H100 FP32 66.9e12 / 3.35e12 = 20 FLOP/byte
    assert config.peak_fp32_flops / (config.dram_bandwidth_gbs * 1e9) == pytest.approx(20, rel=0.01)


def test_teaching_config_is_round():
    config = load_config("teaching")
    assert (config.sms, config.core_clock_mhz, config.max_warps_per_sm) == (2, 1000.0, 16)
    latencies = (config.fp32_latency_cycles, config.shared_latency_cycles, config.l1_latency_cycles,
                 config.l2_latency_cycles, config.dram_latency_cycles)
    assert latencies == (4, 20, 30, 200, 400)
    assert config.l2_bytes == 256 * 1024 and config.l2_slices == 4
    assert config.peak_fp32_flops / (config.dram_bandwidth_gbs * 1e9) == 8.0


def test_every_field_documented_with_unit_and_table():
    docs = (ROOT / "docs" / "configs.md").read_text()
    for name, spec in FIELDS.items():
        assert spec.metadata["doc"] and spec.metadata["table"] in TABLES
        assert f"`{name}`" in docs, f"docs/configs.md does not describe {name}"


def test_to_dict_round_trips():
    config = load_config("a100", sms=10)
    assert GPUConfig.from_dict(config.to_dict()) == config
    assert config.to_dict()["max_block_dims"] == [1024, 1024, 64]


# ---------------------------------------------------------------- bad files
def _write_variant(tmp_path: Path, replace_line: str | None = None, with_line: str = "",
                   append: str = "") -> Path:
    text = (CONFIG_DIR / "teaching.toml").read_text()
    if replace_line is not None:
        lines = text.splitlines()
        index = next(i for i, line in enumerate(lines) if re.match(rf"{replace_line}\s*=", line))
        lines[index] = with_line
        text = "\n".join(lines) + "\n"
    path = tmp_path / "variant.toml"
    path.write_text(text + append)
    return path


@pytest.mark.parametrize("field_name, new_line, message", [
    ("sms", 'sms = "two"', "expected int"),
    ("core_clock_mhz", 'core_clock_mhz = "fast"', "expected float"),
    ("max_block_dims", "max_block_dims = [512, 512]", "3 values"),
    ("line_bytes", "line_bytes = 96", "power of two"),
    ("line_bytes", "line_bytes = 16", "multiple of sector_bytes"),
    ("l2_bytes", "l2_bytes = 262400", "does not divide"),
    ("sub_partitions_per_sm", "sub_partitions_per_sm = 3", "does not divide"),
    ("scheduler", 'scheduler = "fifo"', "gto"),
    ("shared_carveouts_kb", "shared_carveouts_kb = [0, 8, 4, 12]", "increasing"),
    ("shared_carveouts_kb", "shared_carveouts_kb = [0, 4, 8]", "largest carveout"),
    ("dram_latency_cycles", "dram_latency_cycles = 0", "positive"),
    ("dram_bandwidth_gbs", "dram_bandwidth_gbs = -1.0", "positive"),
    ("dram_trfc_ns", "dram_trfc_ns = 5000.0", "shorter than dram_trefi_ns"),
    ("dram_address_map", 'dram_address_map = "bank:row"', "'row' first"),
    ("compute_capability", 'compute_capability = "seven"', "major.minor"),
    ("max_threads_per_block", "max_threads_per_block = 1024", "would not fit"),
])
def test_impossible_value_names_file_and_field(tmp_path, field_name, new_line, message):
    path = _write_variant(tmp_path, field_name, new_line)
    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        load_config(path)
    assert (caught.value.file, caught.value.field) == (str(path), field_name)
    assert str(path) in str(caught.value) and field_name in str(caught.value)


def test_missing_field(tmp_path):
    path = _write_variant(tmp_path, "l2_assoc", "")
    with pytest.raises(ConfigError, match="missing") as caught:
        load_config(path)
    assert caught.value.field == "l2_assoc"


def test_unknown_field_suggests_the_right_one(tmp_path):
    path = _write_variant(tmp_path, "l2_assoc", "l2_asoc = 8")
    with pytest.raises(ConfigError, match="did you mean 'l2_assoc'") as caught:
        load_config(path)
    assert caught.value.field == "l2_asoc"


def test_field_in_wrong_table(tmp_path):
    path = _write_variant(tmp_path, "copy_engines", "copy_engines = 2\nsms_extra = 1")
    with pytest.raises(ConfigError, match="unknown field"):
        load_config(path)
    path = _write_variant(tmp_path, "copy_engines", "copy_engines = 2\nsector_bytes = 32")
    with pytest.raises(ConfigError, match=r"belongs in \[memory\]"):
        load_config(path)


def test_unknown_table_and_loader_set_field(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown table \[cache\]"):
        load_config(_write_variant(tmp_path, append="\n[cache]\nsize = 1\n"))
    with pytest.raises(ConfigError, match="set by the loader"):
        load_config(_write_variant(tmp_path, "sms", "sms = 2\nchip_sms = 2"))


def test_invalid_toml_and_missing_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[chip\nname = 1\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "absent.toml")


def test_unknown_name_lists_available():
    with pytest.raises(ConfigError, match="available: .*h100-sxm.*teaching"):
        load_config("h1000")


# ---------------------------------------------------------------- overrides and slicing
def test_overrides_are_validated_and_named():
    assert load_config("teaching", scheduler="gto").scheduler == "gto"
    assert load_config("h100-sxm").replace(l2_latency_cycles=250).l2_latency_cycles == 250
    for overrides, field_name in [({"scheduler": "fifo"}, "scheduler"), ({"sms": "8"}, "sms"),
                                  ({"colour": 1}, "colour"), ({"chip_sms": 4}, "chip_sms"),
                                  ({"line_bytes": 48}, "line_bytes"), ({"sms": 133}, "sms"),
                                  ({"sms": 0}, "sms")]:
        with pytest.raises(ConfigError) as caught:
            load_config("h100-sxm", **overrides)
        assert (caught.value.file, caught.value.field) == ("<override>", field_name)


def test_slice_keeps_each_sm_share():
    full = load_config("h100-sxm")
    part = load_config("h100-sxm", sms=8)
    share = 8 / 132
    assert (part.sms, part.chip_sms, part.dram_bytes) == (8, 132, full.dram_bytes)
    assert part.l2_slices == max(1, math.floor(80 * share + 0.5))
    assert part.dram_channels == max(1, math.floor(full.dram_channels * share + 0.5))
    assert part.l2_bytes == part.l2_slices * full.l2_bytes // full.l2_slices
    assert part.dram_bandwidth_gbs == pytest.approx(full.dram_bandwidth_gbs * share)
    assert part.l2_bytes_per_cycle / part.sms == pytest.approx(full.l2_bytes_per_cycle / full.sms)
    assert part.peak_fp32_flops == pytest.approx(full.peak_fp32_flops * share)
    back = part.replace(sms=132)
    assert (back.l2_slices, back.dram_channels, back.l2_bytes) == (80, full.dram_channels, full.l2_bytes)
    assert back.dram_bandwidth_gbs == pytest.approx(full.dram_bandwidth_gbs)


def test_explicit_override_wins_over_slicing():
    part = load_config("v100", sms=4, dram_bandwidth_gbs=100.0)
    assert part.dram_bandwidth_gbs == 100.0 and part.sms == 4


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(SHIPPED), fraction=st.floats(0.0, 1.0))
def test_every_slice_is_a_valid_config(name, fraction):
    full = load_config(name)
    sms = max(1, round(fraction * full.sms))
    part = full.replace(sms=sms)
    assert part.l2_slices >= 1 and part.dram_channels >= 1
    assert part.l2_bytes % (part.l2_slices * part.l2_assoc * part.line_bytes) == 0
    assert part.dram_bandwidth_gbs / sms == pytest.approx(full.dram_bandwidth_gbs / full.sms)
    again = part.replace(sms=1).replace(sms=sms)
    assert (again.l2_slices, again.dram_channels, again.l2_bytes) == (part.l2_slices, part.dram_channels,
                                                                      part.l2_bytes)
    assert again.dram_bandwidth_gbs == pytest.approx(part.dram_bandwidth_gbs)


def test_shared_capacity_cannot_exceed_unified_l1():
    with pytest.raises(ConfigError, match="l1_shared_bytes_per_sm") as caught:
        load_config("teaching", max_shared_bytes_per_sm=20480, shared_carveouts_kb=[0, 4, 8, 20])
    assert caught.value.field == "max_shared_bytes_per_sm"


def test_names_resolve_through_the_installed_package(monkeypatch):
    # what a plain `pip install` sees: no source checkout, only the gpusim.configs package data
    import gpusim.arch.config as config_module

    if config_module._packaged_configs() is None:
        pytest.skip("gpusim is not installed (not even editable), so gpusim.configs is not importable")
    monkeypatch.setattr(config_module, "_source_configs_dir", lambda: None)
    assert set(SHIPPED) <= set(config_module.list_configs())
    assert load_config("teaching") == config_module.load_config(CONFIG_DIR / "teaching.toml")


@pytest.mark.parametrize("name", [name for name in SHIPPED if name != "teaching"])
def test_mshrs_cover_twice_littles_law_at_the_busier_level(name):
    """In-flight sectors per SM: at least 2 x max(DRAM bandwidth per SM x DRAM latency, L2 bandwidth per SM x
    L2 latency) / sector, from the config's own (sourced) figures; configs/*.toml derive it so."""
    config = load_config(name)
    per_cycle = config.core_clock_mhz * 1e6
    dram = config.dram_bandwidth_gbs * 1e9 / per_cycle / config.sms * config.dram_latency_cycles
    l2 = config.l2_bytes_per_cycle / config.sms * config.l2_latency_cycles
    assert config.mshrs_per_sm >= math.ceil(2 * max(dram, l2) / config.sector_bytes)
