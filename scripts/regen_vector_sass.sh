#!/usr/bin/env bash
# Regenerates tests/data/vectorize/NAME.ARCH.sass: ptxas's SASS for the PTX whose vector loads
# tests/test_vectorize.py compares with gpusim's code generation (the SGEMM ladder of validation/kernels for sm_86
# and sm_90, the
# conformance corpus tests/corpus, and the attention lab's kernels: attn_softmax reads words at a loop-carried
# residue, which ptxas does not vectorize). Development-time only: the listings are committed, and the tests
# never need ptxas or nvdisasm. nvdisasm: the PyPI package nvidia-cuda-nvdisasm, or Triton's copy
# (NVDISASM=path/to/nvdisasm).
#
# Usage: scripts/regen_vector_sass.sh
set -euo pipefail
PTXAS="${PTXAS:-ptxas}"
NVDISASM="${NVDISASM:-nvdisasm}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/tests/data/vectorize"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for ptx in "$root/validation/kernels/sgemm_ladder.ptx" "$root/programs/labs/attention.ptx" "$root"/tests/corpus/*.ptx; do
    name="$(basename "$ptx" .ptx)"
    # the SGEMM ladder for the A6000 (GA102, sm_86) it is validated on; the corpus for its own .target
    ARCH="$(sed -n -E 's/^\.target[[:space:]]+(sm_[0-9]+).*/\1/p' "$ptx" | head -1)"
    [ "$name" = sgemm_ladder ] && ARCH=sm_86
    # ptxas 13.0 unrolls nested constant loops less for sm_90: the ladder for the H100/H200 configs too
    if [ "$name" = sgemm_ladder ]; then
        grep -v '^// gpusim: regs=' "$ptx" | sed 's/^\.version 9\.[1-9]/.version 9.0/' > "$work/$name.ptx"
        "$PTXAS" -arch=sm_90 -O3 "$work/$name.ptx" -o "$work/$name.sm_90.cubin"
        {
            echo "// ${ptx#"$root"/}: ptxas -arch=sm_90 -O3, nvdisasm -c -hex ($("$PTXAS" --version | tail -1))"
            "$NVDISASM" -c -hex "$work/$name.sm_90.cubin"
        } > "$out/$name.sm_90.sass"
    fi
    # ptxas reads PTX ISA 9.0 at most; the '// gpusim: regs=' lines are gpusim's own
    grep -v '^// gpusim: regs=' "$ptx" | sed 's/^\.version 9\.[1-9]/.version 9.0/' > "$work/$name.ptx"
    if ! "$PTXAS" -arch="$ARCH" -O3 "$work/$name.ptx" -o "$work/$name.cubin" 2>/dev/null; then
        echo "$name: ptxas refused it for $ARCH; skipped" >&2
        continue
    fi
    {
        echo "// ${ptx#"$root"/}: ptxas -arch=$ARCH -O3, nvdisasm -c -hex ($("$PTXAS" --version | tail -1))"
        "$NVDISASM" -c -hex "$work/$name.cubin"
    } > "$out/$name.$ARCH.sass"
    # kept: the kernels that can have vector loads (shared memory, or 64/128-bit loads in the SASS)
    if ! grep -q '\.shared' "$ptx" && ! grep -qE '(LDS|LDG)[A-Z.]*\.(64|128)' "$out/$name.$ARCH.sass"; then
        rm "$out/$name.$ARCH.sass"
    fi
done
echo "listings in $out"
