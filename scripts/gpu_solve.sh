#!/usr/bin/env bash
# On the GPU machine, from the repository root: Morris partitions solved by
# the CPU twin (CpuTwin::solve, candidate-driven, all cores) and by the GPU
# (kernels retro_*), bytes compared, positions/s and the ratio per partition:
# the "retro solve" rows of `tbforge bench gpu morris` (its kernel checks run
# too, kept small here). Build elsewhere:
#   cargo build --release
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/gpu_solve.sh .device/
# Arguments: the max values to run (default "5 6"), every partition of each.
# CPU_MAX_SIZE=S solves partitions of more than S indices on the GPU only;
# SOLVE_MAX_SIZE=S skips partitions of more than S; SYMMETRY=off solves every
# position; TRACE=1 prints where each solver's time goes. Logs under $OUT.
set -uo pipefail
BIN=${BIN:-.device/tbforge}
OUT=${OUT:-/tmp/tbforge-gpusolve}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[ -n "${TRACE:-}" ] && export TBFORGE_TWIN_TRACE=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/host.txt"
echo "cores $(nproc)" | tee -a "$OUT/host.txt"
extra=(--samples 4096 --work-log2 16)
[ -n "${CPU_MAX_SIZE:-}" ] && extra+=(--cpu-max-size "$CPU_MAX_SIZE")
[ -n "${SOLVE_MAX_SIZE:-}" ] && extra+=(--solve-max-size "$SOLVE_MAX_SIZE")
status=0
for max in ${@:-5 6}; do
  "$BIN" bench gpu morris --param "max=$max" --param "symmetry=${SYMMETRY:-on}" "${extra[@]}" 2>&1 |
    tee "$OUT/solve-$max.txt"
  s=${PIPESTATUS[0]}
  [ "$s" -ne 0 ] && status=$s
done
echo
for max in ${@:-5 6}; do
  echo "## morris max=$max"
  grep -E '^\| (kernel|---|retro solve)|comparisons' "$OUT/solve-$max.txt"
done
echo "gpu_solve exit status $status"
exit "$status"
