"""Launch checks as the CUDA runtime makes them: LaunchError for impossible geometry, resources a block
cannot get, and arguments that do not match the kernel's .param list; good arguments arrive converted to the
declared type (both launch spellings)."""

import numpy as np
import pytest

import gpusim
from gpusim.errors import LaunchError

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
PARAMS_PTX = HEADER + """
.visible .entry k(.param .u64 p_out, .param .s32 p_i, .param .u8 p_b, .param .f32 p_f, .param .f64 p_d,
                  .param .u64 p_u)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f32 %f<2>; .reg .f64 %fd<2>;
  ld.param.u64 %rd1, [p_out]; cvta.to.global.u64 %rd1, %rd1;
  ld.param.s32 %r1, [p_i]; ld.param.u8 %r2, [p_b]; ld.param.f32 %f1, [p_f]; ld.param.f64 %fd1, [p_d];
  ld.param.u64 %rd2, [p_u];
  st.global.u32 [%rd1], %r1; st.global.u32 [%rd1+4], %r2; st.global.f32 [%rd1+8], %f1;
  st.global.f64 [%rd1+16], %fd1; st.global.u64 [%rd1+24], %rd2;
  ret;
}
"""


@pytest.fixture(scope="module")
def gpu():
    return gpusim.GPU("teaching")


@pytest.fixture(scope="module")
def kernel(gpu):
    return gpu.load_ptx(PARAMS_PTX)["k"]


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timed"])
def test_arguments_arrive_converted_to_the_declared_types(gpu, kernel, timing):
    out = gpu.zeros(32, np.uint8)
    gpu.launch(kernel, 1, 32, [out, -5, 200, 0.1, 1 / 3, (1 << 64) - 2], timing=timing)
    raw = out.get()
    assert raw[:4].view(np.int32)[0] == -5 and raw[4:8].view(np.uint32)[0] == 200
    assert raw[8:12].view(np.float32)[0] == np.float32(0.1)
    assert raw[16:24].view(np.float64)[0] == 1 / 3 and raw[24:32].view(np.uint64)[0] == (1 << 64) - 2
    out2 = gpu.zeros(32, np.uint8)
    kernel[1, 32](out2, np.int32(-5), np.uint8(200), np.float32(0.1), 1 / 3, np.uint64((1 << 64) - 2))
    np.testing.assert_array_equal(out2.get(), raw)


@pytest.mark.parametrize("args,message", [
    (lambda out: [out, 1, 2, 3.0], "takes 6 arguments"),
    (lambda out: [out, 1, 2, 3.0, 4.0, 5, 6], "takes 6 arguments"),
    (lambda out: [out, 1.5, 2, 3.0, 4.0, 5], "expected an integer"),
    (lambda out: [out, "1", 2, 3.0, 4.0, 5], "expected an integer"),
    (lambda out: [out, 2**31, 2, 3.0, 4.0, 5], "out of range for .s32"),
    (lambda out: [out, 1, 256, 3.0, 4.0, 5], "out of range for .u8"),
    (lambda out: [out, 1, -1, 3.0, 4.0, 5], "out of range for .u8"),
    (lambda out: [out, 1, 2, "x", 4.0, 5], "expected a number"),
    (lambda out: [out, 1, 2, 3.0, 4.0, -1], "out of range for .u64"),
    (lambda out: [out, out, 2, 3.0, 4.0, 5], "DeviceArray passes a 64-bit pointer"),
    (lambda out: [np.zeros(4), 1, 2, 3.0, 4.0, 5], "expected an integer"),
])
def test_wrong_arguments_are_launch_errors(gpu, kernel, args, message):
    out = gpu.zeros(32, np.uint8)
    with pytest.raises(LaunchError, match=message) as info:
        gpu.launch(kernel, 1, 32, args(out), timing=False)
    assert "kernel 'k'" in str(info.value) or "takes" in str(info.value)


@pytest.mark.parametrize("grid,block,message", [
    (1, (32, 17), "too many resources requested for launch: 544 threads per block"),
    (1, (16, 16, 4), "too many resources requested for launch: 1024 threads"),
    (1, (1, 1, 65), "block.z = 65 exceeds"),
    (1, (513, 1), "block.x = 513 exceeds"),
    ((1, 65536), 32, "grid.y = 65536 exceeds"),
    (0, 32, "invalid configuration argument"),
    (1, (0, 4), "invalid configuration argument"),
    ((1, 1, 1, 1), 32, "1 to 3 dimensions"),
    ("big", 32, "grid must be an int"),
])
def test_bad_geometry_is_a_launch_error(gpu, kernel, grid, block, message):
    with pytest.raises(LaunchError, match=message.replace("(", r"\(").replace(")", r"\)")):
        gpu.launch(kernel, grid, block, [gpu.zeros(32, np.uint8), 1, 2, 3.0, 4.0, 5], timing=False)


def test_too_much_shared_memory_per_block(gpu, kernel):
    limit = gpu.config.max_shared_bytes_per_block
    args = [gpu.zeros(32, np.uint8), 1, 2, 3.0, 4.0, 5]
    gpu.launch(kernel, 1, 32, args, shared_bytes=limit - 16, timing=False)   # no static shared
    with pytest.raises(LaunchError, match=f"too many resources requested for launch.*shared memory.*{limit}"):
        gpu.launch(kernel, 1, 32, args, shared_bytes=limit + 1, timing=False)


def test_static_shared_memory_counts_too(gpu):
    limit = gpu.config.max_shared_bytes_per_block
    text = HEADER + f""".visible .entry k(.param .u64 p)
{{
  .shared .align 4 .b8 big[{limit + 4}];
  .reg .b32 %r<2>;
  mov.u32 %r1, big; st.shared.u32 [%r1], 1;
  ret;
}}
"""
    with pytest.raises(LaunchError, match=f"{limit + 4} bytes of shared memory"):
        gpu.launch(gpu.load_ptx(text)["k"], 1, 32, [0], timing=False)


def test_registers_times_threads_over_the_register_file(gpu, kernel):
    args = [gpu.zeros(32, np.uint8), 1, 2, 3.0, 4.0, 5]
    per_block = gpu.config.registers_per_sm
    threads = 512
    fits = per_block // threads
    gpu.launch(kernel, 1, threads, args, regs=fits, timing=False)
    with pytest.raises(LaunchError, match="too many resources requested for launch.*registers"):
        gpu.launch(kernel, 1, threads, args, regs=2 * fits, timing=False)
    with pytest.raises(LaunchError, match="256 registers per thread"):
        gpu.launch(kernel, 1, 32, args, regs=256, timing=False)


def test_launch_of_something_that_is_not_a_kernel(gpu):
    with pytest.raises(LaunchError, match="expects a Kernel"):
        gpu.launch("vecadd", 1, 32, [])
    with pytest.raises(LaunchError, match=r"kernel\[grid, block\]"):
        gpusim.GPU("teaching").load_ptx(PARAMS_PTX)["k"][1]
