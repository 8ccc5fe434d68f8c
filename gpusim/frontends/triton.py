"""``gpusim.triton.launch``: a ``@triton.jit`` kernel compiled by Triton to PTX and run on a gpusim GPU.

What it models: Triton's own compiler (``triton.compile`` of an ``ASTSource`` for
``GPUTarget("cuda", cc, 32)``; no GPU or driver is needed) builds the kernel for the config's compute
capability with the specialisation Triton's launcher applies: an integer argument equal to 1 becomes
a constant, and a pointer or integer divisible by 16 is marked ``tt.divisibility=16`` (gpusim's
allocations are 256-byte aligned, as cudaMalloc's are), which is what lets Triton vectorise loads.
The launch follows Triton's ABI: the non-constexpr arguments in order, then the scratch pointers
recent versions append (global and profile scratch, allocated when the kernel asks for them);
``num_warps`` warps per program make the block, the compiled kernel's shared memory is its dynamic
shared memory, and ``grid`` is a tuple or Triton's ``lambda meta: (...)``. Host (numpy) arrays are
copied to the device and back; DeviceArrays are passed in place; a bool is a byte. A host-side
``TensorDescriptor`` is passed as Triton's CUDA launcher passes it: a CUtensorMap (``GPU.tensor_map`` of the
compiled box and swizzle over the descriptor's shape and strides), the shape and the strides when the kernel
copies with TMA, else the base pointer, shape, strides and flags of Triton's lowering.

Triton's tensor-core code (``mma.sync``, ``ldmatrix``, ``cp.async``; ``wgmma`` and TMA on sm_90) runs; kernels that
need PTX gpusim does not model (the non-tensor bulk prefetch and reduction) end in
``UnsupportedPTXError`` naming every such instruction the PTX uses. Simplified: one compiled kernel per
(function, signature, constants, num_warps, num_stages) in the process; no autotuning (pass the constexprs you want).
"""

from __future__ import annotations

import re

import numpy as np

from gpusim.errors import KernelCompileError, LaunchError, UnsupportedPTXError
from gpusim.frontends.loader import load_entry, require, resolve_gpu
from gpusim.launch.device_memory import DeviceArray

_COMPILED: dict = {}   # key -> (ptx, metadata)
_LOADED: dict = {}     # (id(gpu), key) -> (gpu, LoadedKernel)

_DTYPES = {
    "float32": "fp32", "float16": "fp16", "float64": "fp64", "int8": "i8", "int16": "i16", "int32": "i32",
    "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1",
}
# PTX instructions (opcode prefixes) Triton may emit for Hopper's asynchronous copies that gpusim does not model:
# the bulk reduction into a cluster's shared memory (mma.sync, wgmma, ldmatrix, stmatrix, cp.async, mbarrier, 1D
# cp.async.bulk, the bulk prefetch and global reduction, the TMA tensor copies, prefetches and reductions,
# elect.sync, setmaxnreg run: docs/tensor-cores.md).
MISSING_FEATURES = {   # an opcode as the instruction pattern below reads it (up to the first "::")
    "cp.reduce.async.bulk.shared": "bulk reductions into a cluster's shared memory (cp.reduce.async.bulk"
                                   ".shared::cluster)",
}
_INSTRUCTION = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)", re.MULTILINE)


def missing_features(ptx: str) -> dict[str, int]:
    """{feature opcode: instructions} for the MISSING_FEATURES instructions ``ptx`` uses."""
    found: dict[str, int] = {}
    for match in _INSTRUCTION.finditer(ptx):
        opcode = match.group(1)
        if ".tensor" in opcode:      # TMA's tensor forms run
            continue
        for feature in MISSING_FEATURES:
            if opcode == feature or opcode.startswith(feature + "."):
                found[feature] = found.get(feature, 0) + 1
    return found


def _is_descriptor(value) -> bool:
    """A host-side tensor descriptor (``triton.tools.tensor_descriptor.TensorDescriptor``), by its fields."""
    return all(hasattr(value, field) for field in ("base", "shape", "strides", "block_shape", "padding"))


def _type_of(name: str, value) -> str:
    if _is_descriptor(value):       # the launcher's specialisation: element type and block shape
        if not isinstance(value.base, DeviceArray | np.ndarray):
            raise LaunchError(f"Triton argument '{name}': a TensorDescriptor's base must be a DeviceArray or a "
                              f"numpy array, got {type(value.base).__name__}")
        block = ", ".join(str(int(b)) for b in value.block_shape)
        return f"tensordesc<{_type_of(name, value.base)[1:]}[{block}]>"
    if isinstance(value, DeviceArray | np.ndarray):
        dtype = np.dtype(value.dtype).name
        if dtype not in _DTYPES:
            raise LaunchError(f"Triton argument '{name}': arrays of {dtype} are not supported")
        return "*" + _DTYPES[dtype]
    if isinstance(value, bool | np.bool_):
        return "i1"
    if isinstance(value, np.generic):
        return _DTYPES.get(value.dtype.name) or _unsupported(name, value)
    if isinstance(value, int):
        return "i32" if -(1 << 31) <= value < (1 << 31) else "i64" if -(1 << 63) <= value < (1 << 63) else "u64"
    if isinstance(value, float):
        return "fp32"
    return _unsupported(name, value)


def _unsupported(name: str, value):
    raise LaunchError(f"Triton argument '{name}': cannot pass a {type(value).__name__}; pass DeviceArrays, "
                      "numpy arrays, ints, floats or numpy scalars")


def compile_triton(fn, signature: dict, constants: dict, attrs: dict, cc: tuple[int, int], options: dict):
    """(PTX text, Triton's kernel metadata) for one specialisation, cached in the process."""
    key = (fn, tuple(signature.items()), tuple(sorted(constants.items())), tuple(sorted(attrs)), cc,
           tuple(sorted(options.items())))
    if key in _COMPILED:
        return key, _COMPILED[key]
    triton = require("triton", "triton", "gpusim.triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    try:
        source = ASTSource(fn, signature, constants, attrs)
        compiled = triton.compile(source, target=GPUTarget("cuda", cc[0] * 10 + cc[1], 32),
                                  options=dict(options))
    except Exception as error:   # Triton's CompilationError and friends: the user's kernel
        raise KernelCompileError(f"Triton could not compile '{getattr(fn, '__name__', fn)}': {error}") from None
    _COMPILED[key] = (compiled.asm["ptx"], compiled.metadata)
    return key, _COMPILED[key]


TRITON_OPTIONS = {"num_warps": 4, "num_stages": 3, "enable_fp_fusion": True}
"""Triton's compile options ``launch`` takes, with Triton 3.9's defaults."""
LAUNCH_OPTIONS = ("regs", "shared_bytes", "timing", "trace", "cache_control", "cooperative",
                  "max_warp_instructions", "progress")
"""``GPU.launch``'s options ``launch`` passes on (``shared_bytes``: the dynamic shared memory, at least the
compiled kernel's)."""


def launch(fn, grid, *args, gpu=None, **kwargs):
    """Compile ``fn`` (a ``@triton.jit`` function) for ``gpu``'s compute capability and run it; a Run.

    ``args`` are the kernel's arguments in order (DeviceArrays, host arrays, numbers); constexpr
    parameters are passed by name. ``grid`` is an int, a 1-3 tuple, or ``lambda meta: tuple``.
    Keywords are resolved as Triton's launcher resolves them: a keyword naming a kernel parameter is that
    argument, and one naming a compile option (``num_warps``, ``num_stages``, ``enable_fp_fusion``;
    defaults: Triton 3.9's) sets the option, both at once when a constexpr shares an option's name (as
    ``num_stages`` in Triton's softmax tutorial). The other keywords are ``GPU.launch``'s options
    (``regs``, ``shared_bytes``, ``timing``, ``trace``, ``cache_control``, ``cooperative``,
    ``max_warp_instructions``, ``progress``), unless a kernel parameter has the name (then it is the
    argument)."""
    require("triton", "triton", "gpusim.triton")
    params = getattr(fn, "params", None)
    if params is None:
        raise KernelCompileError(f"gpusim.triton.launch expects a @triton.jit function, got {type(fn).__name__}")
    names = {p.name for p in params}
    constexprs = {k: v for k, v in kwargs.items() if k in names}
    options = {k: kwargs.get(k, default) for k, default in TRITON_OPTIONS.items()}
    launch_options = {k: v for k, v in kwargs.items() if k in LAUNCH_OPTIONS and k not in names}
    unknown = [k for k in kwargs if k not in names and k not in TRITON_OPTIONS and k not in LAUNCH_OPTIONS]
    if unknown:
        raise LaunchError(f"Triton kernel '{fn.__name__}' has no parameter '{unknown[0]}' and it is no launch "
                          f"option; parameters: {', '.join(p.name for p in params)}; options: "
                          f"{', '.join([*TRITON_OPTIONS, *LAUNCH_OPTIONS])}")
    for name in ("num_warps", "num_stages"):
        value = options[name]
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < (1 if name == "num_warps"
                                                                                          else 0):
            raise LaunchError(f"Triton option {name} must be a positive int, got {value!r}")
    gpu = resolve_gpu(gpu)
    bound = _bind(fn, params, args, constexprs)
    signature, constants, attrs, runtime = {}, {}, {}, []
    for param in params:
        value = bound[param.name]
        if param.is_constexpr:
            signature[param.name], constants[param.name] = "constexpr", value
            continue
        kind = _type_of(param.name, value)
        if kind.startswith("i") and kind != "i1" and value == 1 and not param.do_not_specialize:
            signature[param.name], constants[param.name] = "constexpr", 1   # Triton's ==1 specialisation
            continue
        signature[param.name] = kind
        runtime.append((param.name, value, kind))
        if kind.startswith("tensordesc"):
            continue
        is_int = kind[0] in "iu" and kind != "i1"
        aligned = kind.startswith("*") or (is_int and int(value) % 16 == 0)
        if aligned and not param.do_not_specialize:
            attrs[(param.num,)] = [["tt.divisibility", 16]]
    cc = (gpu.config.cc_major, gpu.config.cc_minor)
    options = {"num_warps": int(options["num_warps"]), "num_stages": int(options["num_stages"]),
               "enable_fp_fusion": bool(options["enable_fp_fusion"])}
    key, (ptx, meta) = compile_triton(fn, signature, constants, attrs, cc, options)
    loaded = _load(gpu, key, ptx, fn.__name__)
    grid = grid(dict(bound)) if callable(grid) else grid
    return _run(gpu, loaded, meta, grid, runtime, launch_options)


def _bind(fn, params, args, constexprs) -> dict:
    names = [p.name for p in params]
    if len(args) > len(names):
        raise LaunchError(f"Triton kernel '{fn.__name__}' takes {len(names)} arguments, got {len(args)}")
    bound = dict(zip(names, args, strict=False))
    for name, value in constexprs.items():
        if name not in names:
            raise LaunchError(f"Triton kernel '{fn.__name__}' has no parameter '{name}'; parameters: "
                              f"{', '.join(names)}")
        if name in bound:
            raise LaunchError(f"Triton kernel '{fn.__name__}': '{name}' given both by position and by name")
        bound[name] = value
    for param in params:
        if param.name not in bound:
            default = param.default
            if default is param._param.empty:
                raise LaunchError(f"Triton kernel '{fn.__name__}': missing argument '{param.name}'")
            bound[param.name] = default
    return bound


def _load(gpu, key, ptx: str, name: str):
    cache_key = (id(gpu), key)
    if cache_key in _LOADED and _LOADED[cache_key][0] is gpu:
        return _LOADED[cache_key][1]
    missing = missing_features(ptx)
    try:
        loaded = load_entry(gpu, ptx, f"{name} (Triton PTX)", name)
    except UnsupportedPTXError as error:
        if not missing:
            raise
        listed = ", ".join(f"{MISSING_FEATURES[f]} x{n}" for f, n in sorted(missing.items()))
        raise UnsupportedPTXError(f"Triton kernel '{name}' uses PTX gpusim does not model: {listed}; "
                                  f"first rejected: {error.detail}", error.file, error.line, error.column,
                                  error.text) from None
    _LOADED[cache_key] = (gpu, loaded)
    return loaded


def _on_device(gpu, name: str, value, host: list, temporary: list):
    """``value`` as a DeviceArray: a host array is copied in (and back after the run, once per array)."""
    if not isinstance(value, np.ndarray):
        return value
    for array, device in host:
        if array is value:
            return device
    if not value.flags.c_contiguous:
        raise LaunchError(f"Triton argument '{name}': a Triton kernel gets a pointer, so the host "
                          "array must be C-contiguous (np.ascontiguousarray), strides passed as ints")
    device = gpu.to_device(value)
    host.append((value, device))
    temporary.append(device)
    return device


_SWIZZLE_BYTES = (0, 32, 64, 128)    # CUtensorMapSwizzle: NONE, 32B, 64B, 128B


def _descriptor_args(gpu, name: str, desc, base, tma) -> list:
    """The kernel arguments of a TensorDescriptor, as Triton's CUDA launcher makes them: with TMA metadata
    (the kernel copies with TMA: sm_90 and later) a CUtensorMap of the compiled box and swizzle, then the
    shape (i32) and strides (i64); without (a target without TMA lowers the descriptor to pointer
    arithmetic) the base pointer, shape and strides (i64), the padding and tf32 flags, shape and strides."""
    shape, strides = [int(d) for d in desc.shape], [int(s) for s in desc.strides]
    if tma is None:
        return [base, *shape, *strides, int(desc.padding == "nan"), int(bool(desc.round_f32_to_tf32)), *shape,
                *strides]
    if tma.get("is_im2col") or tma.get("fp4_padded"):
        raise LaunchError(f"Triton argument '{name}': im2col and fp4-padded tensor descriptors are not modelled")
    try:
        tmap = gpu.tensor_map(base, box=list(reversed(tma["block_size"])), swizzle=_SWIZZLE_BYTES[tma["swizzle"]],
                              oob_fill="nan" if desc.padding == "nan" else "zero",
                              dtype="tf32" if desc.round_f32_to_tf32 else None, shape=shape, strides=strides)
    except LaunchError as error:
        raise type(error)(f"Triton argument '{name}': {error}") from None
    return [tmap, *shape, *strides]


def _run(gpu, loaded, meta, grid, runtime: list, launch_options: dict):
    program = loaded.kernel.program
    if isinstance(grid, int | np.integer):
        grid = (int(grid),)
    programs = int(np.prod([int(g) for g in grid])) if len(grid) else 1
    host: list[tuple[np.ndarray, DeviceArray]] = []
    values: list = []
    temporary: list[DeviceArray] = []
    descriptors = iter(getattr(meta, "tensordesc_meta", None) or ())
    try:
        for name, value, kind in runtime:
            if kind.startswith("tensordesc"):
                base = _on_device(gpu, name, value.base, host, temporary)
                values.extend(_descriptor_args(gpu, name, value, base, next(descriptors, None)))
                continue
            if kind == "i1":        # a bool goes to a .u8 parameter as 0 or 1, as Triton's launcher passes it
                value = int(bool(value))
            values.append(_on_device(gpu, name, value, host, temporary) if isinstance(value, np.ndarray) else value)
        n_scratch = len(program.params) - len(values)
        if n_scratch < 0:
            raise LaunchError(f"Triton kernel '{program.name}': the PTX takes {len(program.params)} parameters "
                              f"but {len(values)} arguments are not constant")
        for size_name in ("global_scratch_size", "profile_scratch_size")[:n_scratch]:
            size = int(getattr(meta, size_name, 0) or 0)
            if size:
                scratch = gpu.empty(size * programs, np.uint8)
                temporary.append(scratch)
                values.append(scratch)
            else:
                values.append(0)
        block = int(meta.num_warps) * 32
        shared = launch_options.pop("shared_bytes", None)
        needed = int(meta.shared)
        if shared is None:
            shared = needed
        elif isinstance(shared, bool) or not isinstance(shared, int | np.integer) or shared < needed:
            raise LaunchError(f"Triton kernel '{program.name}': shared_bytes={shared!r}, but the compiled kernel "
                              f"uses {needed} bytes of dynamic shared memory (give at least that, or leave it out)")
        run = gpu.launch(loaded.kernel, grid, (block,), values, shared_bytes=int(shared), **launch_options)
        for array, device in host:
            if array.flags.writeable:
                array[...] = device.get()
    finally:
        for device in temporary:
            device.free()
    return run
