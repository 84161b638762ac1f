#!/usr/bin/env bash
# On the GPU machine, from the repository root: solves every partition of
# morris (max 5, then max 6) with the CPU solver (all cores) and with the GPU,
# compares the bytes and prints positions/s and the ratio per partition.
#   cargo build --release --bin tbforge-gpucheck
#   cp target/release/tbforge-gpucheck scripts/gpu_solve.sh .device/
# Logs go to $OUT (default /tmp/tbforge-gpusolve). Arguments: the max values
# to run (default "5 6"); CPU_MAX_SIZE=S solves partitions of more than S
# indices on the GPU only (the CPU takes ~2 min for 5-5 on 16 cores).
set -uo pipefail
BIN=${BIN:-.device/tbforge-gpucheck}
OUT=${OUT:-/tmp/tbforge-gpusolve}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/host.txt"
echo "cores $(nproc)" | tee -a "$OUT/host.txt"
status=0
for max in ${@:-5 6}; do
  "$BIN" solve --max "$max" --cpu-max-size "${CPU_MAX_SIZE:-18446744073709551615}" --out "$OUT" 2>&1 | tee "$OUT/solve-$max.stdout"
  s=${PIPESTATUS[0]}
  [ "$s" -ne 0 ] && status=$s
done
echo "gpu_solve exit status $status"
exit "$status"
