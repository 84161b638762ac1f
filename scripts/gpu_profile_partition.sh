#!/usr/bin/env bash
# Profiles one partition of a streamed GPU build with perf: its first scan
# and then its passes, two samples of one build taken side by side by
# scripts/gpu_perf_attach.sh (whose notes say how to carry perf there).
#   BIN=.device/sym/tbforge AFTER=6-5 bash scripts/gpu_profile_partition.sh
# BIN must be named tbforge (perf attach finds the process by that name)
# and keep its symbols (strip --strip-debug, not strip). Waits until the
# build has written partition AFTER's file (default 6-5: in Morris max=6's
# order 6-6 comes next), samples SCAN seconds (default 10; Morris 6-6's
# first scan took 8.6 s on an H200 host), and PASSES seconds (default 15)
# from PASSES_AT seconds after that (default 12). The build: GAME (default
# Morris max=6), --gpu-mem-limit GPU_MEM (default 25357624, W/64 of Morris
# max=6), --mem-limit MEM (default 675000000) and 3 scratch directories, as
# in scripts/gpu_pipeline_ab.sh. Writes $OUT/scan/perf-report.txt,
# $OUT/passes/perf-report.txt, the build's log and its passes tabulated
# (scripts/pass_journal.py, at the disk rates DISK_W and DISK_R, bytes/s).
# BACKEND=cpu GPU_MEM_ARG= runs it on the CPU (where perf is installed,
# PERF_KIT must still hold it).
. "$(dirname "$0")/gpu_env.sh" tbforge-gpu-profile
read -r -a GAME <<< "${GAME:-morris --param max=6}"
AFTER=${AFTER:-6-5}
[ "$(basename "$BIN")" = tbforge ] || { echo "BIN must be named tbforge (perf attach looks for that name): $BIN"; exit 1; }
rm -rf "$WORK/out" "$WORK"/d*
( t0=$(date +%s.%N)
  "$BIN" build "${GAME[@]}" --backend "${BACKEND:-cuda}" ${GPU_MEM_ARG---gpu-mem-limit ${GPU_MEM:-25357624}} --mem-limit "${MEM:-675000000}" \
    --disk "$WORK/d1" --disk "$WORK/d2" --disk "$WORK/d3" --out "$WORK/out" --json > "$WORK/build.json" 2> "$WORK/err"
  echo "build exit $? after $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s" ) &
for _ in $(seq 1 1200); do [ -f "$WORK/out/$AFTER.tbf" ] && break; sleep 0.5; done
[ -f "$WORK/out/$AFTER.tbf" ] || { echo "partition $AFTER was not written in 600 s"; wait; exit 1; }
echo "partition $AFTER written: sampling"
timeout 300 env OUT="$OUT/scan" bash "$(dirname "$0")/gpu_perf_attach.sh" "$WORK/out" 0 "${SCAN:-10}" &
timeout 300 env OUT="$OUT/passes" bash "$(dirname "$0")/gpu_perf_attach.sh" "$WORK/out" "${PASSES_AT:-12}" "${PASSES:-15}" &
wait
tail -3 "$WORK/err" | cut -c1-300
[ -f "$WORK/out/build-log.json" ] || exit 1
cp "$WORK/out/build-log.json" "$OUT/"
python3 "$(dirname "$0")/pass_journal.py" "$WORK/out" 10 "${DISK_W:-1.2e9}" "${DISK_R:-0.9e9}" > "$OUT/journal.txt"
python3 -c "import json; l = json.load(open('$OUT/build-log.json')); print('pipeline', round(l['pipeline_seconds'], 1), 's, peak RSS', l['peak_rss'] >> 20, 'MB')"
