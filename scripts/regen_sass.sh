#!/usr/bin/env bash
# Regenerates programs/sass/ARCH/NAME.sass (ARCH=sm_90 by default; sm_80 and sm_89 are committed too) from
# every shipped programs/NAME.ptx.
#
# Development-time only: the listings are committed, and nothing at run or test time needs
# ptxas or nvdisasm. Each listing is what `ptxas -arch=sm_90 -O3 -lineinfo` makes of the PTX,
# disassembled by nvdisasm with -gp (the PTX line of every SASS instruction, from the cubin's
# .nv_debug_line_sass) and -hex (the two 64-bit words of every instruction: the upper 23 bits
# of the second word are the control bits: stall count, yield, barriers, reuse; Jia et al.
# 2018). gpusim.codegen.sass parses them. The nvdisasm of the PyPI package
# nvidia-cuda-nvdisasm works (NVDISASM=path/to/nvdisasm).
#
# Usage: scripts/regen_sass.sh [NAME ...]    (no names: every .ptx in programs/)
set -euo pipefail

PTXAS="${PTXAS:-ptxas}"
NVDISASM="${NVDISASM:-nvdisasm}"
ARCH="${ARCH:-sm_90}"
cd "$(dirname "$0")/../programs"
for tool in "$PTXAS" "$NVDISASM"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "regen_sass.sh: '$tool' not found; the committed listings are up to date as shipped" >&2
        exit 1
    fi
done
mkdir -p "sass/$ARCH"
if [ "$#" -gt 0 ]; then
    names=("$@")
else
    names=()
    for ptx in *.ptx; do names+=("${ptx%.ptx}"); done
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for name in "${names[@]}"; do
    mkdir -p "sass/$ARCH/$(dirname "$name")" "$work/$(dirname "$name")"
    "$PTXAS" -arch="$ARCH" -O3 -lineinfo "$name.ptx" -o "$work/$name.cubin"
    {
        echo "// $name.ptx: ptxas -arch=$ARCH -O3 -lineinfo, nvdisasm -c -gp -hex ($("$PTXAS" --version | tail -1))"
        "$NVDISASM" -c -gp -hex "$work/$name.cubin"
    } > "sass/$ARCH/$name.sass"
    echo "$name.ptx -> sass/$ARCH/$name.sass"
done
