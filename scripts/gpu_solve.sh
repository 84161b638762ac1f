#!/usr/bin/env bash
# On the GPU machine, from the repository root: solves Morris partitions with
# the CPU backend (CpuTwin::solve, candidate-driven, all cores) and with the
# GPU (CudaBackend::morris_solve), compares the bytes and prints positions/s
# and the ratio per partition.
#   cargo build --release --bin tbforge-gpucheck
#   cp target/release/tbforge-gpucheck scripts/gpu_solve.sh .device/
# Logs go to $OUT (default /tmp/tbforge-gpusolve). Arguments: the max values
# to run (default "5 6"), every partition of each; PARTITIONS=6-6,7-7 instead
# compares only those (their dependencies solved on the GPU only first).
# CPU_MAX_SIZE=S solves partitions of more than S indices on the GPU only;
# REFERENCE=1 also checks the compared partitions against solve::solve_partition
# (slow); TRACE=1 prints where each solver's time goes.
set -uo pipefail
BIN=${BIN:-.device/tbforge-gpucheck}
OUT=${OUT:-/tmp/tbforge-gpusolve}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[ -n "${TRACE:-}" ] && export TBFORGE_TWIN_TRACE=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/host.txt"
echo "cores $(nproc)" | tee -a "$OUT/host.txt"
extra=()
[ -n "${REFERENCE:-}" ] && extra+=(--reference)
status=0
if [ -n "${PARTITIONS:-}" ]; then
  "$BIN" solve --partitions "$PARTITIONS" --cpu-max-size "${CPU_MAX_SIZE:-18446744073709551615}" \
    ${extra[@]+"${extra[@]}"} --out "$OUT" 2>&1 | tee "$OUT/solve-partitions.stdout"
  status=${PIPESTATUS[0]}
else
  for max in ${@:-5 6}; do
    "$BIN" solve --max "$max" --cpu-max-size "${CPU_MAX_SIZE:-18446744073709551615}" \
      ${extra[@]+"${extra[@]}"} --out "$OUT" 2>&1 | tee "$OUT/solve-$max.stdout"
    s=${PIPESTATUS[0]}
    [ "$s" -ne 0 ] && status=$s
  done
fi
echo "gpu_solve exit status $status"
exit "$status"
