"""Lowering of texture fetches: ``tex.{1d,2d,3d}.v4.{f32,s32,u32}.{f32,s32}`` and
``tld4.{r,g,b,a}.2d.v4.{f32,s32,u32}.f32``, in the unified texture mode nvcc emits for texture objects
(``tex1D/2D/3D<T>(obj, ...)``, ``tex1Dfetch``, ``tex2Dgather``): ``[handle, {coordinates}]`` where the
handle is a ``.u64`` register holding a ``cudaTextureObject_t``.

The parser keeps a texture instruction's operands as text (``gpusim.ptx.parser``); this module reads
them: a 4-element destination vector (``_`` sinks allowed), the handle register and the coordinate
vector (a 3D fetch writes four coordinates, the fourth ignored, as the PTX ISA says). The row's
F_AUX holds the geometry and, for ``tld4``, the component (``gpusim.arch.texture_layout``).

Refused with UnsupportedPTXError naming the construct: texture references (``.texref`` names), separate
samplers, array/cube/multisample geometries, explicit level of detail or gradients (``.level``,
``.grad``), offsets and depth compare, the optional predicate destination, ``txq`` and surfaces.
"""

from __future__ import annotations

import re

from gpusim.arch import codes as c
from gpusim.arch import isa
from gpusim.arch import layout as L
from gpusim.arch import texture_layout as X
from gpusim.ptx import ast
from gpusim.ptx.lower_common import OperandLowering, _err, _Row

TEXTURE_LOWERED_OPCODES = ("tex", "tld4")
_GEOMETRIES = {".1d": 1, ".2d": 2, ".3d": 3}
_COMPONENTS = {".r": 0, ".g": 1, ".b": 2, ".a": 3}
_RESULT_TYPES = {".f32": c.T_F32, ".s32": c.T_S32, ".u32": c.T_U32}
_COORD_TYPES = {".f32": c.T_F32, ".s32": c.T_S32}
_OPERANDS = re.compile(r"^(?:@!?%?[\w$]+\s+)?\S+\s+(?P<dst>\{[^}]*\}|[^,\s]+)\s*,\s*\[(?P<body>.*)\]\s*;?\s*$",
                       re.DOTALL)
_REGISTER = re.compile(r"^%[\w$]+$")


def _split_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")]


def _parse_mods(ins: ast.Instruction) -> tuple[int, int, int, int]:
    """(geometry, component or -1, result type, coordinate type) from the modifiers."""
    mods = list(ins.mods)
    component = -1
    if ins.opcode == "tld4":
        if not mods or mods[0] not in _COMPONENTS:
            raise _err(ins, "tld4 needs a component modifier (.r .g .b .a) first")
        component = _COMPONENTS[mods.pop(0)]
    geometry = [m for m in mods if m in _GEOMETRIES]
    others = [m for m in mods if m not in _GEOMETRIES and m != ".v4" and m not in _RESULT_TYPES
              and m not in _COORD_TYPES]
    if others:
        raise _err(ins, f"texture modifier(s) {' '.join(others)} are not supported ('{ins.opcode}"
                   f"{''.join(ins.mods)}': gpusim models tex.1d/2d/3d and tld4.2d on texture objects, without "
                   "array, cube or multisample geometries, explicit level of detail or gradients, see "
                   "docs/kernels.md)", unsupported=True)
    if len(geometry) != 1:
        raise _err(ins, f"'{ins.opcode}' needs one geometry modifier (.1d .2d .3d)")
    if ".v4" not in mods:
        raise _err(ins, f"'{ins.opcode}' needs the .v4 destination modifier")
    types = [m for m in mods if m in _RESULT_TYPES or m in _COORD_TYPES]
    if len(types) != 2 or types[0] not in _RESULT_TYPES or types[1] not in _COORD_TYPES:
        raise _err(ins, f"'{ins.opcode}' needs a result type (.f32 .s32 .u32) then a coordinate type "
                   "(.f32 .s32)")
    dims = _GEOMETRIES[geometry[0]]
    if ins.opcode == "tld4" and (dims != 2 or types[1] != ".f32"):
        raise _err(ins, "tld4 is modelled for .2d textures with .f32 coordinates", unsupported=True)
    return dims, component, _RESULT_TYPES[types[0]], _COORD_TYPES[types[1]]


def _operand(ins: ast.Instruction, text: str):
    if text == "_":
        return ast.Sink()
    if _REGISTER.match(text):
        return ast.Reg(text)
    raise _err(ins, f"texture operand '{text}' must be a register here")


def lower_texture(fl: OperandLowering, ins: ast.Instruction, b: _Row) -> None:
    """Fill the code row ``b`` of a ``tex`` / ``tld4`` instruction."""
    dims, component, result_type, coord_type = _parse_mods(ins)
    match = _OPERANDS.match(ins.text)
    if match is None:
        raise _err(ins, f"'{ins.opcode}' expects {{d0, d1, d2, d3}}, [handle, {{coordinates}}]")
    dst_text = match.group("dst")
    if "|" in dst_text or not dst_text.startswith("{"):
        raise _err(ins, "a texture fetch's destination is a 4-register vector; the optional predicate "
                   "destination (d|p) is not supported", unsupported=True)
    dsts = _split_list(dst_text[1:-1])
    if len(dsts) != 4:
        raise _err(ins, f"a .v4 texture fetch writes 4 registers, found {len(dsts)}")
    body = match.group("body").strip()
    brace = body.find("{")
    if brace < 0 or not body.endswith("}"):
        raise _err(ins, "expected [handle, {coordinates}]")
    head = [part for part in _split_list(body[:brace]) if part]
    coords = _split_list(body[brace + 1:-1])
    if len(head) != 1:
        raise _err(ins, "separate texture and sampler operands (independent texture mode) are not "
                   "supported: use texture objects (cudaTextureObject_t)", unsupported=True)
    handle = head[0]
    if not _REGISTER.match(handle):
        raise _err(ins, f"the texture '{handle}' is not a register holding a texture object; texture "
                   "references (.texref, texture<...> variables) are not supported: use cudaTextureObject_t "
                   "and gpu.texture(...)", unsupported=True)
    expected = {1: (1,), 2: (2,), 3: (4, 3)}[dims]
    if len(coords) not in expected:
        raise _err(ins, f"a .{dims}d fetch takes {expected[0]} coordinate(s), found {len(coords)}")
    row = b.row
    row[L.F_OP] = c.OP_TLD4 if ins.opcode == "tld4" else c.OP_TEX
    row[L.F_TY] = result_type
    row[L.F_TY2] = coord_type
    row[L.F_AUX] = dims | (X.TEX_AUX_GATHER | component << X.TEX_AUX_COMPONENT_SHIFT if component >= 0 else 0)
    row[L.F_SPACE] = L.SP_GLOBAL
    row[L.F_VEC] = 4
    row[L.F_SIZE] = 4
    out = []
    for text in dsts:
        index = fl.dst(ins, _operand(ins, text))[0]
        if index >= 0 and fl.reg_bits(index) != 32:
            raise _err(ins, f"texture result register '{text}' must be 32-bit")
        out.append(index)
    b.set_dsts(out)
    b.add_src(fl.src(ins, ast.Reg(handle), c.T_U64))
    for text in coords[:dims]:
        operand = _operand(ins, text)
        if isinstance(operand, ast.Sink):
            raise _err(ins, "a texture coordinate cannot be '_'")
        b.add_src(fl.src(ins, operand, coord_type))
    row[L.F_ISA] = isa.isa_row(row[L.F_OP], c.T_NONE, "tld4" if ins.opcode == "tld4" else "tex")
