#!/usr/bin/env bash
# CI: compile every CUDA kernel to PTX for sm_90 with NVRTC, on a machine
# without a GPU. Installs NVRTC from PyPI (nvidia-cuda-nvrtc, ~90 MB) into
# ~/.cache/tbforge-nvrtc when it is not there yet.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$HOME/.cache/tbforge-nvrtc"
lib="$dir/nvidia/cu13/lib"
if [ ! -e "$lib/libnvrtc.so.13" ]; then
  python3 -m pip install --quiet --target "$dir" nvidia-cuda-nvrtc==13.0.88
fi
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
TBFORGE_REQUIRE_NVRTC=1 cargo test --test kernels_compile -- --nocapture
