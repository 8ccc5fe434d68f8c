from gpusim.labs import tiling


def test_tiled_loads_match_the_formulas_and_run_faster():
    values = tiling.run(progress=False, sms=1, size=64).values
    for name in ("naive", "tiled"):
        assert values[name]["correct"]
        assert values[name]["load_sectors"] == tiling.analytic_load_sectors(64, name == "tiled")
        assert values[name]["dram_bytes"] <= values["compulsory_dram_bytes"]
    assert values["sector_ratio"] == tiling.TILE / 2
    assert values["time_ratio"] > 1.5
