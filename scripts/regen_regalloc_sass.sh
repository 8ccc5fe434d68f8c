#!/usr/bin/env bash
# Regenerates tests/data/regalloc_sass/NAME.sass: the SASS that the register-allocation rules of
# gpusim/ptx/regs.py and gpusim/codegen/pressure.py cite (what ptxas keeps in registers, and where).
# Each is `ptxas -arch=ARCH -O3` of a reference PTX (ARCH: its .target; its '// gpusim: regs=' lines
# dropped), disassembled by `nvdisasm -c`. Development-time only: the listings are committed and the tests
# never need ptxas or nvdisasm (the nvdisasm of the PyPI package nvidia-cuda-nvdisasm, or the one Triton
# ships, works: NVDISASM=path/to/nvdisasm).
#
# Usage: scripts/regen_regalloc_sass.sh
set -euo pipefail

PTXAS="${PTXAS:-ptxas}"
NVDISASM="${NVDISASM:-nvdisasm}"
for tool in "$PTXAS" "$NVDISASM"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "regen_regalloc_sass.sh: '$tool' not found; the committed listings are up to date as shipped" >&2
        exit 1
    fi
done
cd "$(dirname "$0")/.."
out=tests/data/regalloc_sass
mkdir -p "$out"
work="$(mktemp -d)"
for ptx in tests/corpus/gaussian.ptx tests/corpus_llm/layernorm.ptx tests/data/frontend_ptx/numba_map_add10.ptx \
        tests/data/frontend_ptx/triton_matmul_kernel_fp32_fp32_fp32_i32_i32_i32_i32_i32_i32.ptx tests/corpus/reduction.ptx; do
    name="$(basename "$ptx" .ptx)"
    # ptxas reads PTX ISA 9.0 at most; numba's NVVM writes 9.5 for code that uses nothing newer
    grep -v '^// gpusim: regs=' "$ptx" | sed 's/^\.version 9\.[1-9]/.version 9.0/' > "$work/$name.ptx"
    arch="$(awk '$1 == ".target" { sub(/,.*/, "", $2); print $2; exit }' "$work/$name.ptx")"
    "$PTXAS" -arch="$arch" -O3 "$work/$name.ptx" -o "$work/$name.cubin"
    {
        echo "// $ptx: ptxas -arch=$arch -O3 ($("$PTXAS" --version | tail -1)), nvdisasm -c"
        "$PTXAS" -arch="$arch" -O3 -v "$work/$name.ptx" -o /dev/null 2>&1 | grep -E "entry function|spill|Used" | sed 's|^|// |'
        "$NVDISASM" -c "$work/$name.cubin"
    } > "$out/$name.sass"
    echo "$out/$name.sass"
done
rm -rf "$work"
