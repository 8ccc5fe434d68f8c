#!/usr/bin/env bash
# Regenerates tests/ptx/*/NAME.ptx from NAME.cu with nvcc (sm_90, -O3, -lineinfo) and puts ptxas -v's register
# count of each kernel in a '// gpusim: regs=N kernel=NAME' line at the top, as the shipped programs carry it.
# The .ptx files are committed: nothing at test time needs the CUDA toolkit. Usage: tests/ptx/regen.sh DIR/NAME.cu ...
set -euo pipefail
cd "$(dirname "$0")"
for source in "$@"; do
    source="${source#tests/ptx/}"
    output="${source%.cu}.ptx"
    dir="$(dirname "$source")"
    base="$(basename "$source")"
    (cd "$dir" && nvcc -ptx -O3 -arch=sm_90 -lineinfo -o "${base%.cu}.ptx" "$base")
    sed -i -E "s|^(\s*\.file\s+[0-9]+\s+\")[^\"]*/${base}\"|\1${base}\"|" "$output"
    regs="$(ptxas -v -arch=sm_90 "$output" -o /dev/null 2>&1 | awk '
        /Compiling entry function/ { name = $0; sub(/^.*entry function \047/, "", name); sub(/\047.*$/, "", name) }
        /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") print "// gpusim: regs=" $(i + 1) " kernel=" name }')"
    { echo "$regs"; cat "$output"; } > "$output.tmp" && mv "$output.tmp" "$output"
    echo "$source -> $output"
done
