#!/usr/bin/env bash
# On the GPU machine, from the repository root: checkers endgame databases
# built whole (issue 19).
# 1. COMPARE pieces (default 5): the CPU build (the kernels' twin on every
#    core) and the CUDA build, each timed, byte-identical (every file and the
#    manifest); positions per piece count from `info` against the published
#    counts.
#    Then the CUDA build killed (SIGKILL) twice and resumed: identical too.
# 2. BIG pieces (default 6; "none" skips): the CUDA build alone, timed (goal:
#    2 minutes through 6 pieces), its counts against the published ones, and
#    `verify` of its files.
# Source: J. Schaeffer et al., "Checkers Is Solved" (Science, 2007), Table 1:
#   positions with 1..6 pieces 120; 6,972; 261,224; 7,092,774; 148,688,232;
#   2,503,611,964; 7 pieces 34,779,531,480.
# The binary is built elsewhere (no Rust on the GPU machine):
#   cargo build --release --features cuda
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/*.sh .device/
. "$(dirname "$0")/gpu_env.sh" tbforge-checkers
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "== $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"

counts() {
  "$BIN" info "$1" --json > "$OUT/info.json" || return 1
  python3 - "$OUT/info.json" <<'PY'
import json, sys
published = [120, 6972, 261224, 7092774, 148688232, 2503611964, 34779531480]
rows = json.load(open(sys.argv[1]))["groups"]
bad = 0
for i, r in enumerate(rows):
    want = published[i] if i < len(published) else None
    ok = want is None or r["positions"] == want
    bad += not ok
    print("   %-10s %15s wins %14s draws %12s losses %14s  published %15s  %s" % (
        r["group"], format(r["positions"], ","), format(r["wins"], ","), format(r["draws"], ","),
        format(r["losses"], ","), format(want, ",") if want else "-", "ok" if ok else "MISMATCH"))
sys.exit(1 if bad else 0)
PY
}

built_seconds() {
  python3 - "$1" <<'PY'
import json, sys
print("%.1f" % json.load(open(sys.argv[1] + "/build-log.json"))["seconds"])
PY
}

n=${COMPARE:-5}
echo "== checkers pieces=$n: CPU (twin) against CUDA"
rm -rf "$WORK/cpu" "$WORK/gpu"
for b in cpu cuda; do
  d=$WORK/$([ $b = cpu ] && echo cpu || echo gpu)
  /usr/bin/time -f "   $b: %e s wall, %M KB peak" timeout 560 "$BIN" build checkers --param pieces="$n" \
    --backend $b --out "$d" > "$OUT/build-$b-$n.txt" 2>&1 || { echo "   $b build failed:"; tail -3 "$OUT/build-$b-$n.txt"; status=1; }
  tail -1 "$OUT/build-$b-$n.txt"
done
if diff -r -x build-log.json "$WORK/cpu" "$WORK/gpu" > /dev/null; then
  echo "   identical: every file and the manifest ($(ls "$WORK/gpu" | wc -l) files)"
else
  echo "   DIFFERENT"; status=1
fi
echo "   seconds: cpu $(built_seconds "$WORK/cpu"), gpu $(built_seconds "$WORK/gpu")"
counts "$WORK/gpu" || status=1

# Killed with SIGKILL after each of KILLS seconds (default "3 6"), then
# resumed with --resume: the same files as the uninterrupted CPU build.
echo "== checkers pieces=$n on the GPU, killed and resumed"
res=$WORK/resumed; rm -rf "$res"
for k in ${KILLS:-3 6}; do
  timeout -s KILL "$k" "$BIN" build checkers --param pieces="$n" --backend cuda --out "$res" --resume \
    > /dev/null 2>> "$OUT/resume.err"
  echo "   killed after $k s: $(ls "$res" 2>/dev/null | wc -l) files kept"
done
"$BIN" build checkers --param pieces="$n" --backend cuda --out "$res" --resume > "$OUT/resume.txt" 2>> "$OUT/resume.err" \
  || { echo "   resume failed"; tail -3 "$OUT/resume.err"; status=1; }
python3 - "$res/build-log.json" <<'PY'
import json, sys
print("   resumed build: %d partitions kept from before the kills" % json.load(open(sys.argv[1]))["resumed_partitions"])
PY
if diff -r -x build-log.json "$WORK/cpu" "$res" > /dev/null; then
  echo "   killed-and-resumed: identical to the CPU build"
else
  echo "   killed-and-resumed: DIFFERENT"; status=1
fi

big=${BIG:-6}
if [ "$big" != none ]; then
  echo "== checkers pieces=$big on the GPU"
  rm -rf "$WORK/big"
  /usr/bin/time -f "   %e s wall, %M KB peak" timeout 560 "$BIN" build checkers --param pieces="$big" \
    --backend cuda --out "$WORK/big" > "$OUT/build-big.txt" 2>&1 \
    || { echo "   build failed or timed out:"; tail -3 "$OUT/build-big.txt"; status=1; }
  tail -1 "$OUT/build-big.txt"
  if [ -f "$WORK/big/manifest.json" ]; then
    echo "   build seconds (every database through $big pieces): $(built_seconds "$WORK/big")"
    counts "$WORK/big" || status=1
    timeout 120 "$BIN" verify "$WORK/big" | tail -1
    du -sb "$WORK/big" | awk '{printf "   files: %.1f MB\n", $1/1e6}'
  fi
fi
exit $status
