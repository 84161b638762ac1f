#!/usr/bin/env bash
# On the GPU machine, from the repository root: Nine Men's Morris at full size.
# 1. `tbforge bench gpu morris`: class index and retro kernels against their
#    CPU twins on fresh random inputs, whole partitions CPU twin vs GPU.
# 2. Whole builds CPU vs CUDA backend for MORRIS_COMPARE (default "5 6"):
#    byte-identical files, verify --deep.
# 2b. A CUDA build of max=RESUME_MAX (default 6) killed at RESUME_KILLS
#    (default "3 6" seconds after each start) and resumed with --resume:
#    byte-identical to the CPU build of step 2.
# 3. Whole CUDA builds for MORRIS_BIG (default "7 8 9"), each timed, verified,
#    with `tbforge info` and the build log's stage table where the binary has
#    `bench stages`.
# 4. SYMMETRY_MAX (default 5): symmetry off and on builds, then `tbforge
#    compare` of every symmetry-off position against the symmetry-on files
#    (values, distances and W/D/L position totals).
# 5. ZSTD_LEVEL (default 19): `tbforge bench zstd` of the largest partition
#    of the last MORRIS_BIG build against its level-9 file.
# Peak device memory of each big build: nvidia-smi sampled every 100 ms.
# The binary is built elsewhere (no Rust on the GPU machine):
#   cargo build --release
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/*.sh .device/
. "$(dirname "$0")/gpu_env.sh" tbforge-morris
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "== $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"
if [ "${SKIP_CHECK:-}" != 1 ]; then
  "$BIN" bench gpu morris --param max="${CHECK_MAX:-6}" --samples "${SAMPLES:-1048576}" 2>"$OUT/check.err" | tee "$OUT/check.txt" || status=1
fi
if [ -n "${MORRIS_COMPARE-5 6}" ]; then
  C4_BOARDS=none bash "$(dirname "$0")/gpu_build.sh" ${MORRIS_COMPARE-5 6} 2>&1 | tail -12 || status=1
fi
rm_=${RESUME_MAX-6}
if [ -n "$rm_" ]; then
  dir="$WORK/resumed-$rm_"
  rm -rf "$dir"
  for k in ${RESUME_KILLS-3 6}; do
    timeout -s KILL "$k" "$BIN" build morris --param max="$rm_" --backend cuda --out "$dir" --resume --json >/dev/null 2>>"$OUT/resume.err"
    echo "killed after $k s: $(ls "$dir" | grep -c tbf) files written"
  done
  "$BIN" build morris --param max="$rm_" --backend cuda --out "$dir" --resume --json >"$OUT/resume.json" 2>>"$OUT/resume.err" || status=1
  ref=$(ls -d /tmp/tbforge-gpubuild-work/cpu-morris_max_"$rm_" 2>/dev/null)
  if [ -n "$ref" ]; then
    bad=0
    for f in "$ref"/*; do n=$(basename "$f"); [ "$n" = build-log.json ] && continue; cmp -s "$f" "$dir/$n" || { echo "MISMATCH resumed: $n"; bad=1; }; done
    [ $bad = 0 ] && echo "killed-and-resumed max=$rm_: identical to the CPU build" || status=1
  fi
fi
for m in ${MORRIS_BIG-7 8 9}; do
  dir="$WORK/morris-$m"
  rm -rf "$dir"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$OUT/gpumem-$m.txt" 2>/dev/null &
  smi=$!
  start=$(date +%s.%N)
  TBFORGE_TWIN_TRACE=1 /usr/bin/time -v "$BIN" build morris --param max="$m" --backend cuda --out "$dir" --json >"$OUT/build-$m.json" 2>"$OUT/build-$m.err" || { status=1; tail -5 "$OUT/build-$m.err"; }
  end=$(date +%s.%N)
  kill $smi 2>/dev/null
  echo "== morris max=$m: $(python3 -c "print('%.1f' % ($end - $start))") s wall, peak host RSS $(grep 'Maximum resident' "$OUT/build-$m.err" | awk '{printf "%.1f GiB", $6/1048576}'), peak device memory $(sort -n "$OUT/gpumem-$m.txt" | tail -1) MiB"
  "$BIN" info "$dir" | head -8
  "$BIN" bench stages "$dir" 2>/dev/null || python3 - "$dir/build-log.json" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
print("seconds %.1f, accelerated partitions %s, peak rss %s" % (log["seconds"], log["accelerated_partitions"], log.get("peak_rss")))
PY
  /usr/bin/time -f "verify --deep %e s" "$BIN" verify "$dir" --deep >"$OUT/verify-$m.txt" 2>&1 || { status=1; echo "verify max=$m FAILED"; tail -3 "$OUT/verify-$m.txt"; }
  tail -1 "$OUT/verify-$m.txt"
  du -sb "$dir" | awk '{printf "files %.2f GB\n", $1/1e9}'
done
sm=${SYMMETRY_MAX-5}
if [ -n "$sm" ]; then
  for sym in off on; do
    "$BIN" build morris --param max="$sm" --param symmetry=$sym --backend cuda --out "$WORK/sym-$sym-$sm" --json >"$OUT/sym-$sym.json" 2>"$OUT/sym-$sym.err" || { status=1; tail -3 "$OUT/sym-$sym.err"; }
  done
  /usr/bin/time -f "compare %e s" "$BIN" compare "$WORK/sym-off-$sm" "$WORK/sym-on-$sm" >"$OUT/compare.txt" 2>&1 || status=1
  tail -25 "$OUT/compare.txt"
fi
if [ -n "${ZSTD_LEVEL-19}" ] && [ -n "${dir:-}" ] && [ -d "$dir" ]; then
  "$BIN" bench zstd "$dir" --level "${ZSTD_LEVEL-19}" 2>&1 | tail -15 || status=1
fi
echo "gpu_morris exit status $status"
exit $status
