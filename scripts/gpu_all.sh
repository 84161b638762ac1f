#!/usr/bin/env bash
# One call on the GPU machine for everything a closing note reports, from the
# repository root with the binaries built elsewhere (no Rust there):
#   cargo build --release
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/*.sh .device/
# (only the tbforge binary: the checks are `tbforge bench gpu GAME`.)
# Steps (each prints its own table; logs under $OUT/<step>):
#   check     `tbforge bench gpu` per game: kernels vs CPU twins on fresh random
#             inputs, throughput, whole partitions CPU twin vs GPU
#   solve     Morris partition solves CPU twin vs GPU (SOLVE_ARGS: max values, e.g. "6")
#   build     whole builds CPU vs --backend auto, byte-identical, verify --deep
#   pipeline  external-memory pipeline vs disk bandwidth (PIPELINE_RUNS)
# Usage: scripts/gpu_all.sh [STEP...]   (default: all four)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/tbforge-gpu-all}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
status=0
step() { # name command...
  local name=$1; shift
  echo "===== $name ($(date -u +%T))"
  local t0=$SECONDS
  OUT="$OUT/$name" "$@" 2>&1 | tee "$OUT/$name.log" | tail -n "${TAIL:-40}"
  local s=${PIPESTATUS[0]}
  echo "===== $name: exit $s after $((SECONDS - t0)) s"
  [ "$s" -ne 0 ] && status=$s
}
for s in ${@:-check solve build pipeline}; do
  case $s in
    check) step check bash "$here/gpu_check.sh" ;;
    solve) step solve bash "$here/gpu_solve.sh" ${SOLVE_ARGS:-} ;;
    build) step build bash "$here/gpu_build.sh" ${BUILD_ARGS:-4} ;;
    pipeline)
      # "GAME|PARAMS|MEM|CGROUP_MB" entries separated by ';'
      IFS=';' read -ra runs <<< "${PIPELINE_RUNS:-nim|heaps=9,9,9,9,9,9,9|56M|160;connect4|width=5 height=5|128M|256}"
      i=0
      for r in "${runs[@]}"; do
        IFS='|' read -r g p m c <<< "$r"
        i=$((i + 1))
        step "pipeline-$i" env TBFORGE="$(dirname "$here")/.device/tbforge" GAME="$g" PARAMS="$p" MEM="$m" CGROUP_MB="$c" \
          bash "$here/bench_pipeline.sh" "${SCRATCH:-/tmp/tbforge-pipeline-bench}"
      done ;;
    *) echo "unknown step $s"; status=2 ;;
  esac
done
echo "gpu_all exit status $status"
exit $status
