#!/usr/bin/env bash
# Regenerates the committed PTX beside each .cu here (needs nvcc; the tests do not).
set -euo pipefail
cd "$(dirname "$0")"
for source in *.cu; do
    nvcc -ptx -O3 -arch=sm_80 "$source" -o "${source%.cu}.ptx"
done
