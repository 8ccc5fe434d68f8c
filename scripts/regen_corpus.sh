#!/usr/bin/env bash
# Regenerates tests/corpus/NAME.ptx from every tests/corpus/NAME.cu (the conformance corpus).
#
# As scripts/regen_ptx.sh does for programs/, but for sm_90 (the corpus's target) and with the registers
# per thread that ptxas -v reports written into the PTX as '// gpusim: regs=N kernel=NAME' lines, so the
# tests' occupancy does not depend on ptxas being installed. The .ptx files are committed: nothing at run
# or test time needs the CUDA toolkit. The absolute path nvcc writes into the .file entry of the kernel's
# own source is rewritten to the bare file name.
#
# Usage: scripts/regen_corpus.sh [NAME ...]    (no names: every .cu in tests/corpus/)
set -euo pipefail

NVCC="${NVCC:-nvcc}"
PTXAS="${PTXAS:-ptxas}"
ARCH="${ARCH:-sm_90}"
# shellcheck source=scripts/ptxas_regs.sh
source "$(dirname "$0")/ptxas_regs.sh"
cd "$(dirname "$0")/../tests/corpus"

for tool in "$NVCC" "$PTXAS"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "regen_corpus.sh: '$tool' not found; the committed .ptx files are up to date as shipped" >&2
        exit 1
    fi
done

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
    kernels="$(prepend_ptxas_regs "$output" "$ARCH")"
    echo "$source -> $output ($kernels kernels)"
done
