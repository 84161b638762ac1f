#!/usr/bin/env bash
# Two binaries' streamed GPU builds on one host, one after the other: the
# host's speed drifts between device sessions (the same binary's Morris
# max=6 build took 243 s on one H200 host and, its CPU steps a fifth
# slower throughout, 260 s on another), so a change is measured against
# the binary before it in the same run.
#   BIN_A=.device/tbforge-a BIN_B=.device/tbforge bash scripts/gpu_pipeline_ab.sh
# ARGS_A and ARGS_B add options to one build (a setting against another
# with one binary: BIN_B may be BIN_A, ARGS_B="--threads 12"). BIN_C and
# BIN_D (with ARGS_C, ARGS_D), where given, are built after them, against
# the same reference builds: one run measures a series of changes.
# Morris max=MORRIS_MAX (default 6), --gpu-mem-limit W/AB_FRACTION (default
# 64) of the GPU build's largest working set, 3 scratch directories, --mem-limit as in
# bench_gpu_pipeline.sh; both must match the CPU build byte for byte (or,
# with AB_REFERENCE=gpu, the in-memory GPU build). Each
# build's log is left in $OUT as build-log-A.json, build-log-B.json ..., its
# passes tabulated with the disk's rates (dd before the builds) in
# journal-A.txt, journal-B.txt ...
. "$(dirname "$0")/gpu_env.sh" tbforge-gpu-ab
BIN_A=${BIN_A:?the binary before the change}
BIN_B=${BIN_B:?the binary with it}
MORRIS_MAX=${MORRIS_MAX:-6}
# AB_GAME: another game and its parameters (e.g. "connect4 --param width=5 --param height=5").
read -r -a GAME <<< "${AB_GAME:-morris --param max=$MORRIS_MAX}"
rm -rf "$WORK/cpu" "$WORK/gpu"
# The newer binary measures what its device keeps resident (the limit adds it).
"$BIN_B" build "${GAME[@]}" --backend cuda --out "$WORK/gpu" --json > /dev/null || exit 1
# AB_REFERENCE=gpu: the streamed builds are compared with that in-memory GPU
# build (itself checked against the CPU build by bench_gpu_pipeline.sh), not
# a CPU build: a minute less where device time is short.
REF=$WORK/gpu
if [ "${AB_REFERENCE:-cpu}" = cpu ]; then
  REF=$WORK/cpu
  "$BIN_A" build "${GAME[@]}" --backend cpu --out "$REF" --json > /dev/null || exit 1
  echo "in-memory GPU build against the CPU build: $(same "$REF" "$WORK/gpu")"
fi
W=$(python3 -c "import json;print(json.load(open('$WORK/gpu/build-log.json')).get('largest_working_set', 0))")
MEM=$(streamed_mem_limit "$REF" "$WORK/gpu")
disk_rates
echo "disk: sequential write $(python3 -c "print(round($DISK_W / 1e9, 2))") GB/s, read $(python3 -c "print(round($DISK_R / 1e9, 2))") GB/s"
echo "| binary | wall s | pipeline s | expand / answer / combine / marking s | CPU s: expand / answer / combine / flushers | peak RSS MB (--mem-limit $((MEM >> 20))) | same bytes |"
echo "| --- | ---: | ---: | --- | --- | ---: | --- |"
for which in A B C D; do
  bin=BIN_$which; args=ARGS_$which; dir="$WORK/$which"
  [ -n "${!bin:-}" ] || continue
  rm -rf "$dir" "$dir".d*
  t0=$(date +%s.%N)
  "${!bin}" build "${GAME[@]}" --backend cuda --gpu-mem-limit $((W / ${AB_FRACTION:-64})) --mem-limit $MEM \
    --disk "$dir.d1" --disk "$dir.d2" --disk "$dir.d3" ${!args:-} --out "$dir" --json > /dev/null 2> "$dir.err" \
    || { echo "$which failed: $(tail -1 "$dir.err")"; status=1; continue; }
  wall=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
  python3 - "$dir/build-log.json" "$which" "$wall" "$(same "$REF" "$dir")" <<'PY'
import json, sys
log = json.load(open(sys.argv[1])); p = log["pipeline_profile"]
f = lambda *ks: " / ".join(f"{p.get(k, 0):.1f}" for k in ks)
print(f"| {sys.argv[2]} | {sys.argv[3]} | {log['pipeline_seconds']:.1f} | {f('expand', 'answer', 'combine', 'candidates')} | "
      f"{f('expand_cpu', 'answer_cpu', 'combine_cpu')} / {p.get('flusher_group', 0) + p.get('flusher_encode', 0):.1f} | "
      f"{log.get('peak_rss', 0) / 2**20:.0f} | {sys.argv[4]} |")
PY
  grep -q DIFFERENT <<< "$(same "$REF" "$dir")" && status=1
  # Where each build's passes went, each step's wall time beside the disk
  # time of its bytes (scripts/pass_journal.py); the log kept for more.
  cp "$dir/build-log.json" "$OUT/build-log-$which.json"
  python3 "$(dirname "$0")/pass_journal.py" "$dir" 10 "$DISK_W" "$DISK_R" > "$OUT/journal-$which.txt"
  rm -rf "$dir".d*
done
exit $status
