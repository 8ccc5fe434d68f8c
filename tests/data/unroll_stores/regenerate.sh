#!/usr/bin/env bash
# Regenerates the SASS listing of the hand-written stores.ptx (needs ptxas and nvdisasm; the tests do not).
# CUDA 13.0 ptxas; nvdisasm from the nvidia-cuda-nvdisasm wheel.
set -euo pipefail
cd "$(dirname "$0")"
ptxas -arch=sm_90 -O3 -v stores.ptx -o /tmp/stores.cubin 2> /tmp/stores.log
{
    echo "// tests/data/unroll_stores/stores.ptx: ptxas -arch=sm_90 -O3 ($(ptxas --version | tail -1)), nvdisasm -c -gp -hex"
    grep -v 'Compile time' /tmp/stores.log | sed 's|^|// |'
    nvdisasm -c -gp -hex /tmp/stores.cubin
} > stores.sm_90.sass
