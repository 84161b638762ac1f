#!/usr/bin/env bash
# On the GPU machine, from the repository root: checks every CUDA kernel
# against its CPU twin on fresh random inputs and prints the throughput table
# (Morris 7-7 expansion, CPU all cores vs GPU). The binary is built elsewhere:
#   cargo build --release --bin tbforge-gpucheck
#   cp target/release/tbforge-gpucheck scripts/gpu_check.sh .device/
# The device tool sends the session's own checkout, also when a helper calls
# it from another worktree: a helper copies the two files into a folder of
# that checkout's ignored .device/ (e.g. .device/kperf/), carries that folder
# and runs `BIN=.device/kperf/tbforge-gpucheck bash .device/kperf/gpu_check.sh`.
# Full logs go to $OUT (default /tmp/tbforge-gpucheck). Extra arguments go to
# tbforge-gpucheck (--ranks-log2 N, --samples N, --seed S).
set -uo pipefail
BIN=${BIN:-.device/tbforge-gpucheck}
OUT=${OUT:-/tmp/tbforge-gpucheck}
mkdir -p "$OUT"
# NVRTC of the machine's own toolkit: PTX from a newer NVRTC is refused by an
# older driver.
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
{
  echo "== host: $(nproc) cores, $(uname -r)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,memory.total \
    --format=csv 2>&1
  ls /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so* 2>&1 | head -3
} | tee "$OUT/host.txt"
"$BIN" --out "$OUT" "$@" 2>&1 | tee "$OUT/stdout.log"
status=${PIPESTATUS[0]}
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$OUT/host.txt" 2>&1
echo "gpu_check exit status $status"
exit "$status"
