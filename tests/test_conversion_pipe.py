"""Where int32 -> fp32 conversions issue (gpusim.arch.isa, the ``cvt.i2f32`` form; configs' int_to_fp32_pipe).

ptxas emits I2F for ``cvt.rn.f32.s32`` up to sm_80 and I2FP.F32.S32 from sm_86 on (its SASS for
validation/kernels/probe.ptx); the H200's shared-store probe, one I2FP per STS, stores 1.13 cycles apart per SM,
faster than the 16-lane conversion unit could convert (2 cycles per warp), so the GH100 configs issue it to the
ALU. Expected cycles come from the config's lane counts and the loop's instructions as lowered."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.arch import isa as I
from gpusim.arch import layout as L

CONVERSIONS = 8
PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry convert(.param .u64 out, .param .u32 iters)
{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .f32 %f<16>;
    .reg .b64 %rd<2>;
    .reg .f64 %fd<2>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r9, [iters];
    mov.u32 %r1, %tid.x;
    mov.u32 %r10, 0;
$L_loop:
""" + "".join(f"    cvt.rn.f32.s32 %f{k}, %r1;\n" for k in range(CONVERSIONS)) + """    add.u32 %r10, %r10, 1;
    setp.lt.u32 %p1, %r10, %r9;
    @%p1 bra $L_loop;
    cvt.rz.f32.s32 %f8, %r1;
    cvt.rzi.s32.f32 %r2, %f0;
    cvt.rn.f32.u32 %f9, %r2;
    cvt.rn.f64.s32 %fd1, %r1;
    st.global.f32 [%rd1], %f7;
    ret;
}
"""


def _forms(program):
    return [I.FORMS[int(f)].name for f in program.code[:, L.F_ISA]]


def _config(name, pipe):
    return gpusim.load_config(name, sms=1).replace(int_to_fp32_pipe=pipe)


def test_round_to_nearest_int32_conversions_get_their_own_form():
    program = gpusim.GPU("h200", sms=1, codegen="none").load_ptx(PTX)["convert"].program
    forms = _forms(program)
    assert forms.count("cvt.i2f32") == CONVERSIONS + 1        # the loop's .rn.f32.s32 and the .rn.f32.u32
    assert forms.count("cvt.float") == 3                       # .rz (I2F.RZ), float -> int (F2I), int -> f64


@pytest.mark.parametrize("name, pipe", [("h200", "alu"), ("h100-sxm", "alu"), ("a100", "sfu"), ("v100", "sfu")])
def test_the_configs_pipe_and_its_rate(name, pipe):
    config = gpusim.load_config(name)
    assert config.int_to_fp32_pipe == pipe
    table = I.isa_array(config)
    row = table[[form.name for form in I.FORMS].index("cvt.i2f32")]
    lanes = config.int32_lanes_per_sm if pipe == "alu" else config.sfu_lanes_per_sm
    assert row[I.I_PIPE] == I.PIPE_NAMES.index(pipe)
    assert row[I.I_INTERVAL] == 32 // (lanes // config.sub_partitions_per_sm)


@pytest.mark.parametrize("pipe", ["sfu", "alu"])
def test_a_conversion_loop_runs_at_its_pipes_rate(pipe):
    """32 warps per SM converting: a loop trip costs each sub-partition its warps x the busier pipe's cycles per
    warp-trip, from the config's lanes: the 8 conversions on `pipe`, and on the ALU the loop's add and compare
    too (32 lanes over the pipe's lanes per sub-partition each), within 10 %."""
    gpu = gpusim.GPU(_config("h200", pipe), codegen="none")     # the loop as written: 8 conversions a trip
    config = gpu.config
    kernel = gpu.load_ptx(PTX)["convert"]
    out = gpu.zeros(1, np.float32)
    warps, sub = 32, config.sub_partitions_per_sm
    cycles = [gpu.launch(kernel, grid=1, block=32 * warps, args=[out, np.uint32(n)]).cycles for n in (64, 128)]
    per_trip = (cycles[1] - cycles[0]) / 64
    alu = 32 / (config.int32_lanes_per_sm / sub)
    sfu = 32 / (config.sfu_lanes_per_sm / sub)
    per_warp = (CONVERSIONS + 2) * alu if pipe == "alu" else max(CONVERSIONS * sfu, 2 * alu)
    assert per_trip == pytest.approx(per_warp * warps / sub, rel=0.10)


def test_an_unknown_pipe_is_a_config_error_naming_the_field():
    from gpusim.errors import ConfigError

    with pytest.raises(ConfigError, match="int_to_fp32_pipe.*expected one of sfu, alu, fma"):
        gpusim.load_config("h200").replace(int_to_fp32_pipe="xu")
