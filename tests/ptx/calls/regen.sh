#!/usr/bin/env bash
# Regenerates tests/ptx/calls/NAME.ptx from NAME.cu (nvcc -arch=sm_90 -ptx) and writes each kernel's register
# count from `ptxas -v` into it as a `// gpusim: regs=N kernel=NAME` line. The .ptx files are committed: the
# tests never need the CUDA toolkit. Run only after editing a .cu.
set -euo pipefail
# shellcheck source=scripts/ptxas_regs.sh
source "$(dirname "$0")/../../../scripts/ptxas_regs.sh"
cd "$(dirname "$0")"
for cu in "${@:-*.cu}"; do
    [ -e "$cu" ] || cu=$(ls *.cu)
    for src in $cu; do
        name="${src%.cu}"
        nvcc -arch=sm_90 -ptx "$src" -o "$name.ptx"
        prepend_ptxas_regs "$name.ptx" sm_90 >/dev/null
    done
done
