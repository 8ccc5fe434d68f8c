#!/usr/bin/env bash
# Regenerates validation/kernels/NAME.ptx from NAME.cu with nvcc (sm_80, -O3, -lineinfo) and writes ptxas's
# register counts per architecture into it (scripts/ptxas_regs.sh: write_ptxas_regs), as scripts/regen_ptx.sh
# does for programs/, with sm_86 besides: the a6000 config (GA102, compute capability 8.6) takes its registers per
# thread from that count, which differs from sm_80's (sgemm_ladder: sgemm_vectorized 105 against 98,
# sgemm_bank_linear 127 against 101). The .ptx files are committed: running the suite never needs nvcc.
# Usage: validation/regen.sh [NAME ...]   (no names: every .cu in validation/kernels/)
set -euo pipefail
NVCC="${NVCC:-nvcc}"
ARCH="${ARCH:-sm_80}"
# shellcheck source=scripts/ptxas_regs.sh
source "$(dirname "$0")/../scripts/ptxas_regs.sh"
cd "$(dirname "$0")/kernels"
if [ "$#" -gt 0 ]; then sources=("${@/%/.cu}"); else sources=(*.cu); fi
for cu in "${sources[@]}"; do
    ptx="${cu%.cu}.ptx"
    "$NVCC" -ptx -O3 -lineinfo -arch="$ARCH" "$cu" -o "$ptx"
    sed -i -E "s|^(\s*\.file\s+[0-9]+\s+\")[^\"]*/${cu}\"|\1${cu}\"|" "$ptx"
    echo "$ptx: $(write_ptxas_regs "$ptx" sm_80 sm_86 sm_89 sm_90) kernels"
done
