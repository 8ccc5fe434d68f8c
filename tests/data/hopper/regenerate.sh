#!/usr/bin/env bash
# Regenerates the committed PTX fixture from the .cu beside it (needs nvcc; the tests do not). CUDA 13.0.
set -euo pipefail
cd "$(dirname "$0")"
nvcc -ptx -O3 -arch=sm_90 tile_pipeline.cu -o tile_pipeline.ptx
nvcc -ptx -O3 -arch=sm_90a launch_control.cu -o launch_control.ptx
nvcc -ptx -O3 -arch=sm_90a tma_tiles.cu -o tma_tiles.ptx
nvcc -ptx -O3 -arch=sm_90a clusters.cu -o clusters.ptx
nvcc -ptx -O3 -arch=sm_90a cluster_rank.cu -o cluster_rank.ptx
