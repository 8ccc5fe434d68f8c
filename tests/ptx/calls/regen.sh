#!/usr/bin/env bash
# Regenerates tests/ptx/calls/NAME.ptx from NAME.cu (nvcc -arch=sm_90 -ptx) and writes each kernel's register
# count from `ptxas -v` into it as a `// gpusim: regs=N kernel=NAME` line. The .ptx files are committed: the
# tests never need the CUDA toolkit. Run only after editing a .cu.
set -euo pipefail
cd "$(dirname "$0")"
for cu in "${@:-*.cu}"; do
    [ -e "$cu" ] || cu=$(ls *.cu)
    for src in $cu; do
        name="${src%.cu}"
        nvcc -arch=sm_90 -ptx "$src" -o "$name.ptx.tmp"
        {
            ptxas -v -arch=sm_90 "$name.ptx.tmp" -o /dev/null 2>&1 | grep -E "entry function|Used [0-9]+ registers" |
                paste - - | sed -E "s/.*entry function '([^']+)'.*Used ([0-9]+) registers.*/\/\/ gpusim: regs=\2 kernel=\1/"
            cat "$name.ptx.tmp"
        } > "$name.ptx"
        rm "$name.ptx.tmp"
    done
done
