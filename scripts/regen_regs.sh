#!/usr/bin/env bash
# (Re)writes the '// gpusim: regs=T sm_80=A sm_89=B sm_90=C kernel=NAME' lines of every shipped
# programs/**/*.ptx from `ptxas -v` (scripts/ptxas_regs.sh: write_ptxas_regs), so that a launch's registers
# per thread, and so its occupancy, are ptxas's for the config's architecture without ptxas installed.
# scripts/regen_ptx.sh calls the same function after nvcc; run this one after editing a hand-written .ptx.
#
# Development-time only: the lines are committed. Usage: scripts/regen_regs.sh [PTX ...]
#                                                        (no arguments: every .ptx under programs/)
set -euo pipefail

PTXAS="${PTXAS:-ptxas}"
# shellcheck source=scripts/ptxas_regs.sh
source "$(dirname "$0")/ptxas_regs.sh"
if ! command -v "$PTXAS" >/dev/null 2>&1; then
    echo "regen_regs.sh: '$PTXAS' not found; the committed lines are up to date as shipped" >&2
    exit 1
fi
if [ "$#" -gt 0 ]; then
    files=("$@")
else
    cd "$(dirname "$0")/.."
    mapfile -t files < <(find programs -name '*.ptx' | sort)
fi
for ptx in "${files[@]}"; do
    echo "$ptx: $(write_ptxas_regs "$ptx") kernels"
done
