#!/usr/bin/env bash
# Regenerates tests/corpus_llm/NAME.ptx (sm_90) and NAME.sm_80.ptx (sm_80) from every tests/corpus_llm/NAME.cu
# (the LLM-training kernel corpus), as scripts/regen_corpus.sh does for tests/corpus: nvcc -O3 -lineinfo, the
# .file path made bare, and ptxas -v's register counts at the file's architecture written in as
# '// gpusim: regs=N kernel=NAME' lines. The .ptx files are committed; nothing at test time needs the CUDA
# toolkit. Then run `python scripts/ptxas_reference.py --ptxas-only` to refresh tests/data/ptxas_regs.json.
#
# Usage: scripts/regen_corpus_llm.sh [NAME ...]    (no names: every .cu in tests/corpus_llm/)
set -euo pipefail

NVCC="${NVCC:-nvcc}"
# shellcheck source=scripts/ptxas_regs.sh
source "$(dirname "$0")/ptxas_regs.sh"
cd "$(dirname "$0")/../tests/corpus_llm"

if [ "$#" -gt 0 ]; then
    sources=()
    for name in "$@"; do sources+=("${name%.cu}.cu"); done
else
    sources=(*.cu)
fi

for source in "${sources[@]}"; do
    for arch in sm_90 sm_80; do
        output="${source%.cu}.ptx"
        [ "$arch" = sm_90 ] || output="${source%.cu}.$arch.ptx"
        "$NVCC" -ptx -O3 -arch="$arch" -lineinfo -o "$output" "$source"
        sed -i -E "s|^(\s*\.file\s+[0-9]+\s+\")[^\"]*/${source}\"|\1${source}\"|" "$output"
        kernels="$(prepend_ptxas_regs "$output" "$arch")"
        echo "$source -> $output ($kernels kernels)"
    done
done
