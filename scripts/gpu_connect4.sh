#!/usr/bin/env bash
# On the GPU machine, from the repository root: Connect Four on the GPU.
# 1. kernel connect4_solve vs its CPU twin on fresh random indices of large
#    boards (7x6, 8x7, 9x6, 4x15, 6x7);
# 2. every partition of each board solved by the CPU solver (all cores) and by
#    the GPU (each partition from the GPU's previous one, kept on the device,
#    as a build does), bytes compared; boards of more than CPU_MAX_POSITIONS
#    positions are solved on the GPU only and spot-checked against the twin.
# Prints a table of positions/s, CPU vs GPU, per board.
#   cargo build --release --bin tbforge-gpucheck
#   strip -o .device/tbforge-gpucheck target/release/tbforge-gpucheck
#   cp scripts/gpu_connect4.sh .device/
# Logs go to $OUT (default /tmp/tbforge-gpuconnect4). BOARDS: comma list of
# WIDTHxHEIGHT (default 4x4,5x4,4x5,5x5,6x4,4x6,5x6,6x5).
set -uo pipefail
BIN=${BIN:-.device/tbforge-gpucheck}
OUT=${OUT:-/tmp/tbforge-gpuconnect4}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/host.txt"
echo "cores $(nproc)" | tee -a "$OUT/host.txt"
"$BIN" connect4 \
  --boards "${BOARDS:-4x4,5x4,4x5,5x5,6x4,4x6,5x6,6x5}" \
  --cpu-max-positions "${CPU_MAX_POSITIONS:-1000000000}" \
  --samples "${SAMPLES:-1048576}" \
  --out "$OUT" 2>&1 | tee "$OUT/connect4.stdout"
status=${PIPESTATUS[0]}
echo "gpu_connect4 exit status $status"
exit "$status"
