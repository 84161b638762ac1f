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
#
# Measured (NVIDIA H100 80GB HBM3, 16 cores; GPU s = host clock per partition:
# tables, kernel, copy back into host memory; partition n + 1 stays on the device):
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
