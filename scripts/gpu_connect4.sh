#!/usr/bin/env bash
# On the GPU machine, from the repository root: Connect Four on the GPU through
# `tbforge bench gpu connect4`, per board:
# 1. kernels connect4_expand and connect4_solve (compact: only reached
#    indices, successors read from ply n + 1 held compact) vs their CPU twins
#    on fresh random inputs of the board and of large boards (7x6, 8x7, 9x6,
#    4x15, 6x7; synthetic successor values);
# 2. the board's forward search from the empty board and every ply solved by
#    the GPU (each from the GPU's previous one, kept on the device, as a build
#    does), against the CPU twin; boards of more than CPU_MAX_POSITIONS
#    positions run on the GPU only and are sampled against the twin.
# Prints a table per board and all of them at the end. Build elsewhere:
#   cargo build --release
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/gpu_connect4.sh .device/
# Logs go to $OUT (default /tmp/tbforge-gpuconnect4). BOARDS: comma list of
# WIDTHxHEIGHT (default 4x4,5x4,4x5,5x5,6x4,4x6,5x6,6x5).
#
# The numbers below are from the full-array kernel, before plies were layered
# (kernels/PERF.md has the layered kernels' figures).
# Measured with the former tbforge-gpucheck (NVIDIA H100 80GB HBM3, 16 cores;
# CPU = the generic solver; GPU s = host clock per partition: tables, kernel,
# copy back into host memory; partition n + 1 stays on the device):
# | board | positions | CPU 16 thr s | GPU s | kernel s | GPU M pos/s | ratio | bytes |
# | 5x4 | 5,621,939 | 0.489 | 0.006 | 0.001 | 935 | 81x | identical |
# | 4x5 | 3,039,959 | 0.232 | 0.004 | 0.001 | 824 | 63x | identical |
# | 5x5 | 171,976,899 | 13.921 | 0.066 | 0.014 | 2,622 | 212x | identical |
# | 6x4 | 159,643,961 | 13.338 | 0.074 | 0.015 | 2,159 | 180x | identical |
# | 4x6 | 45,340,631 | 3.744 | 0.019 | 0.004 | 2,428 | 201x | identical |
# | 5x6 | 5,167,808,119 | - | 1.046 | 0.375 | 4,941 | - | GPU only, 1.5 M sampled vs twin |
# | 6x5 | 9,918,556,649 | - | 1.712 | 0.798 | 5,795 | - | GPU only, 1.6 M sampled vs twin |
# | 7x4 | 4,593,382,831 | - | 0.923 | 0.443 | 4,978 | - | GPU only, 1.5 M sampled vs twin |
# (4x4: 0.043 s GPU, the one-time staging setup.) Kernel alone: 13-14 G positions/s.
set -uo pipefail
BIN=${BIN:-.device/tbforge}
OUT=${OUT:-/tmp/tbforge-gpuconnect4}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/host.txt"
echo "cores $(nproc)" | tee -a "$OUT/host.txt"
status=0
boards=$(echo "${BOARDS:-4x4,5x4,4x5,5x5,6x4,4x6,5x6,6x5}" | tr ',' ' ')
for b in $boards; do
  "$BIN" bench gpu connect4 --param "width=${b%x*}" --param "height=${b#*x}" \
    --cpu-max-size "${CPU_MAX_POSITIONS:-1000000000}" --samples "${SAMPLES:-1048576}" \
    ${SEED:+--seed "$SEED"} 2>&1 | tee "$OUT/connect4-$b.txt"
  s=${PIPESTATUS[0]}
  [ "$s" -ne 0 ] && status=$s
done
echo
echo "| board | kernel | target | positions | CPU s | GPU s | CPU M pos/s | GPU M pos/s | ratio | matched | detail |"
for b in $boards; do
  grep -E '^\| connect4_solve \(board\)' "$OUT/connect4-$b.txt" | sed "s/^/| $b /"
done
echo "gpu_connect4 exit status $status"
exit "$status"
