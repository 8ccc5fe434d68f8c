#!/usr/bin/env bash
# Regenerates the committed PTX fixtures from the .cu files beside them (needs nvcc; the tests do not).
# Made with CUDA 13.0 (PTX ISA 9.0). CUDA 13 no longer compiles for sm_70, so sm_75 stands in for Volta-era
# targets; hand-written fixtures in tests/test_ptx_parser.py cover .version 7.x / .target sm_70 text.
set -euo pipefail
cd "$(dirname "$0")"
nvcc -ptx -O3 -arch=sm_80 reduce_shared.cu -o reduce_shared.ptx
nvcc -ptx -O3 -arch=sm_90 warp_ops.cu -o warp_ops.ptx
nvcc -ptx -O3 -arch=sm_75 atomics.cu -o atomics.ptx
nvcc -ptx -O3 -arch=sm_80 double_int64.cu -o double_int64.ptx
nvcc -ptx -O3 -arch=sm_90 noinline_call.cu -o noinline_call.ptx
nvcc -ptx -O3 -arch=sm_80 smem_const_local.cu -o smem_const_local.ptx
nvcc -ptx -O3 -lineinfo -arch=sm_86 lineinfo_inline.cu -o lineinfo_inline.ptx
# nvcc writes the absolute path of the source into .file; keep the fixture independent of the checkout.
sed -i "s|\"$(pwd)/|\"|" lineinfo_inline.ptx
