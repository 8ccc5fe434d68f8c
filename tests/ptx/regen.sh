#!/usr/bin/env bash
# Regenerates tests/ptx/*/NAME.ptx from NAME.cu with nvcc (sm_90, -O3, -lineinfo) and puts ptxas -v's register
# count of each kernel in a '// gpusim: regs=N kernel=NAME' line at the top, as the shipped programs carry it.
# The .ptx files are committed: nothing at test time needs the CUDA toolkit. Usage: tests/ptx/regen.sh DIR/NAME.cu ...
set -euo pipefail
# shellcheck source=scripts/ptxas_regs.sh
source "$(dirname "$0")/../../scripts/ptxas_regs.sh"
cd "$(dirname "$0")"
for source in "$@"; do
    source="${source#tests/ptx/}"
    output="${source%.cu}.ptx"
    dir="$(dirname "$source")"
    base="$(basename "$source")"
    (cd "$dir" && nvcc -ptx -O3 -arch=sm_90 -lineinfo -o "${base%.cu}.ptx" "$base")
    sed -i -E "s|^(\s*\.file\s+[0-9]+\s+\")[^\"]*/${base}\"|\1${base}\"|" "$output"
    prepend_ptxas_regs "$output" sm_90 >/dev/null
    echo "$source -> $output"
done
