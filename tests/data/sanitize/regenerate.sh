#!/usr/bin/env bash
# Regenerates the committed PTX beside each .cu here (needs nvcc; the tests do not).
set -euo pipefail
cd "$(dirname "$0")"
for source in *.cu; do
    nvcc -ptx -O3 -lineinfo -arch=sm_90 "$source" -o "${source%.cu}.ptx"
done
