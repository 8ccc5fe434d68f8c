#!/usr/bin/env bash
# Regenerates programs/NAME.ptx from every programs/NAME.cu with nvcc.
#
# The .ptx files are committed so that nothing at run or test time needs nvcc; run
# this only after editing a .cu, on a machine that has the CUDA toolkit. -lineinfo makes
# the PTX carry .loc lines that map instructions back to the .cu source; the absolute
# path nvcc writes into the .file entry of the kernel's own source is rewritten to the
# bare file name (relative to the .ptx), so the committed files do not depend on where
# they were generated.
#
# Usage: scripts/regen_ptx.sh [NAME ...]    (no names: every .cu in programs/)
set -euo pipefail

NVCC="${NVCC:-nvcc}"
ARCH="${ARCH:-sm_80}"
cd "$(dirname "$0")/../programs"

if ! command -v "$NVCC" >/dev/null 2>&1; then
    echo "regen_ptx.sh: '$NVCC' not found; the committed .ptx files are up to date as shipped" >&2
    exit 1
fi

if [ "$#" -gt 0 ]; then
    sources=()
    for name in "$@"; do
        sources+=("${name%.cu}.cu")
    done
else
    sources=(*.cu)
fi

for source in "${sources[@]}"; do
    output="${source%.cu}.ptx"
    "$NVCC" -ptx -O3 -arch="$ARCH" -lineinfo -o "$output" "$source"
    sed -i -E "s|^(\s*\.file\s+[0-9]+\s+\")[^\"]*/${source}\"|\1${source}\"|" "$output"
    echo "$source -> $output"
done
