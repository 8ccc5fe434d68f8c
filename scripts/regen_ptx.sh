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
# Usage: scripts/regen_ptx.sh [NAME ...]    (no names: every .cu in programs/; a NAME may name a
#                                            subfolder's program, e.g. labs/tensor_intensity)
set -euo pipefail

NVCC="${NVCC:-nvcc}"
ARCH="${ARCH:-sm_80}"
PTXAS="${PTXAS:-ptxas}"
# shellcheck source=scripts/ptxas_regs.sh
source "$(dirname "$0")/ptxas_regs.sh"
cd "$(dirname "$0")/../programs"

# Their target where it is newer than $ARCH (e4m3 mma needs sm_89+). Every regenerated .ptx gets
# '// gpusim: regs=T sm_80=A sm_89=B sm_90=C kernel=NAME' lines from `ptxas -v` (scripts/ptxas_regs.sh:
# write_ptxas_regs): registers per thread set the occupancy, which the timing depends on, differ per
# architecture, and gpusim's own estimate is only an estimate.
declare -A ARCH_OF=([gemm_bf16_mma.cu]=sm_90 [gemm_wgmma.cu]=sm_90a [gemm_hopper.cu]=sm_90a
                    [labs/attention_hopper.cu]=sm_90a [labs/decode_hopper.cu]=sm_90a)

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
    base="$(basename "$source")"
    "$NVCC" -ptx -O3 -arch="${ARCH_OF[$source]:-$ARCH}" -lineinfo -o "$output" "$source"
    sed -i -E "s|^(\s*\.file\s+[0-9]+\s+\")[^\"]*/${base}\"|\1${base}\"|" "$output"
    # and the headers of this folder (programs/*.cuh) that the source includes, by their bare names too
    sed -i -E "s|^(\s*\.file\s+[0-9]+\s+\")[^\"]*/(programs/)?([A-Za-z0-9_]+\.cuh)\"|\1\3\"|" "$output"
    write_ptxas_regs "$output" >/dev/null
    echo "$source -> $output"
done
