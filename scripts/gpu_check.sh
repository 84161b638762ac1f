#!/usr/bin/env bash
# On the GPU machine, from the repository root: `tbforge bench gpu` for every
# game with kernels. Each run checks every kernel against its CPU twin on fresh
# random inputs (seed printed; SEED=S replays), measures CPU (all cores) and
# GPU throughput, and solves whole partitions on both with their bytes
# compared; the tables are printed again together at the end. The binary is
# built elsewhere (no Rust on the GPU machine):
#   cargo build --release
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/gpu_check.sh .device/
# The device tool sends the session's own checkout, also when a helper calls
# it from another worktree: a helper copies the two files into a folder of
# that checkout's ignored .device/ (e.g. .device/kperf/) and runs
# `BIN=.device/kperf/tbforge bash .device/kperf/gpu_check.sh`.
# Settings (environment):
#   MORRIS_MAX   Morris partitions solved CPU twin vs GPU (default 6: every
#                partition up to 6-6); "none" skips Morris
#   C4_BOARDS    Connect Four boards WIDTHxHEIGHT (default "5x4 4x6 5x5 6x5")
#   CHECKERS_PIECES  checkers databases of up to N pieces, every partition
#                solved by the GPU and the CPU twin (default 5); "none" skips
#   CHECKERS_CPU_MAX_SIZE  larger checkers partitions are solved on the GPU
#                only (default 400000000: every partition up to 6 pieces)
#   MORRIS_CPU_MAX_SIZE  larger Morris partitions are solved on the GPU only
#                (default 3000000000: every partition up to 6-6 compared)
#   C4_CPU_MAX_SIZE      larger Connect Four boards are solved on the GPU only
#                and sampled against the twin (default 1000000000: 6x5 sampled)
#   SAMPLES      random inputs per kernel comparison (default 1048576)
#   WORK_LOG2    throughput workloads of 2^N positions (default 28)
#   SEED         seed (default: from the clock, printed)
# Extra arguments go to every `tbforge bench gpu` call. Full logs under $OUT.
set -uo pipefail
BIN=${BIN:-.device/tbforge}
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
common=(--samples "${SAMPLES:-1048576}" --work-log2 "${WORK_LOG2:-28}")
[ -n "${SEED:-}" ] && common+=(--seed "$SEED")
status=0
runs=()
run() { # name args...
  local name=$1; shift
  echo "===== $name ($(date -u +%T)): $BIN bench gpu $*"
  "$BIN" bench gpu "$@" "${common[@]}" 2>&1 | tee "$OUT/$name.txt"
  local s=${PIPESTATUS[0]}
  echo "===== $name: exit $s"
  [ "$s" -ne 0 ] && status=$s
  runs+=("$name")
}
# Connect Four first: the shorter runs.
for b in ${C4_BOARDS:-5x4 4x6 5x5 6x5}; do
  run "connect4-$b" connect4 --param "width=${b%x*}" --param "height=${b#*x}" \
    --cpu-max-size "${C4_CPU_MAX_SIZE:-1000000000}" "$@"
done
if [ "${MORRIS_MAX:-6}" != none ]; then
  run "morris-max${MORRIS_MAX:-6}" morris --param "max=${MORRIS_MAX:-6}" \
    --cpu-max-size "${MORRIS_CPU_MAX_SIZE:-3000000000}" "$@"
fi
if [ "${CHECKERS_PIECES:-5}" != none ]; then
  run "checkers-pieces${CHECKERS_PIECES:-5}" checkers --param "pieces=${CHECKERS_PIECES:-5}" \
    --cpu-max-size "${CHECKERS_CPU_MAX_SIZE:-400000000}" "$@"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$OUT/host.txt" 2>&1
echo
echo "===== tables"
for name in "${runs[@]}"; do
  echo "## $name"
  grep -E '^\||comparisons|^seed' "$OUT/$name.txt"
  echo
done
echo "gpu_check exit status $status"
exit "$status"
