#!/usr/bin/env bash
# On the GPU machine, from the repository root: a checkers build longer than
# one device call (issue 19's goal: every database through 7 pieces in 30
# minutes on one H100/H200), started in its own process session and polled
# by later calls on the same warm machine (GPU.md, "Long runs").
#   bash scripts/gpu_checkers_long.sh start [PIECES]   # default 7; polls up to POLL s
#   bash scripts/gpu_checkers_long.sh poll              # waits up to POLL s (default 540)
# When the build has ended, `poll` prints its seconds, the positions per piece
# count from `info` against the published counts (gpu_checkers.sh's list:
# J. Schaeffer et al., "Checkers Is Solved", Table 1), `verify`, the files'
# bytes and the stages' totals; the log and build-log.json go to $OUT.
. "$(dirname "$0")/gpu_env.sh" tbforge-checkers-long
dir=$WORK/long
case "${1:-poll}" in
  start)
    pieces=${2:-7}
    rm -rf "$dir"; mkdir -p "$dir"
    date +%s > "$WORK/long.start"
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
    echo "== $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(df -h "$WORK" | awk 'NR==2{print $4}') free disk"
    echo "== checkers pieces=$pieces on the GPU, in the background"
    setsid nohup /usr/bin/time -f "%e s wall, %M KB peak" "$BIN" build checkers --param pieces="$pieces" \
      --backend cuda --out "$dir" > "$WORK/long.log" 2>&1 < /dev/null &
    ;;
esac
deadline=$(( $(date +%s) + ${POLL:-540} ))
while pgrep -f "build checkers" > /dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 5; done
started=$(cat "$WORK/long.start")
files=$(ls "$dir" 2>/dev/null | grep -c '\.tbf$')
echo "   $(( $(date +%s) - started )) s since start: $files files, $(du -sh "$dir" | cut -f1), $(free -g | awk '/Mem:/{print $3}') GiB used, $(df -h "$WORK" | awk 'NR==2{print $4}') disk free"
tail -c 300 "$WORK/long.log" | tr '\r' '\n' | tail -2
if pgrep -f "build checkers" > /dev/null; then
  echo "   still running"
  exit 0
fi
cp "$WORK/long.log" "$OUT/" 2>/dev/null
[ -f "$dir/build-log.json" ] && cp "$dir/build-log.json" "$OUT/"
if [ ! -f "$dir/manifest.json" ]; then
  echo "   the build ended without a manifest"; exit 1
fi
python3 - "$dir/build-log.json" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
print("   build seconds (every database through the pieces asked): %.1f" % log["seconds"])
PY
"$BIN" info "$dir" --json > "$OUT/info.json"
python3 - "$OUT/info.json" <<'PY'
import json, sys
published = [120, 6972, 261224, 7092774, 148688232, 2503611964, 34779531480]
bad = 0
for i, r in enumerate(json.load(open(sys.argv[1]))["groups"]):
    want = published[i] if i < len(published) else None
    ok = want is None or r["positions"] == want
    bad += not ok
    print("   %-10s %16s  published %16s  %s" % (r["group"], format(r["positions"], ","),
          format(want, ",") if want else "-", "ok" if ok else "MISMATCH"))
sys.exit(1 if bad else 0)
PY
status=$?
python3 - "$dir" <<'PY'
import json, os, struct, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
deep = sorted((f for f in m["files"] if (f.get("max_distance") or 0) > 253),
              key=lambda f: -f["max_distance"])
v6 = sum(1 for f in m["files"]
         if struct.unpack("<I", open(os.path.join(d, f["name"]), "rb").read(12)[8:12])[0] == 6)
print("   partitions with distances beyond 253 plies: %d (format-6 files: %d)" % (len(deep), v6))
for f in deep[:5]:
    print("     %-28s longest %d plies (win %s)" % (f["partition_name"], f["max_distance"], f["longest_win"]))
PY
timeout 300 "$BIN" verify "$dir" | tail -1
du -sb "$dir" | awk '{printf "   files: %.2f GB\n", $1/1e9}'
"$BIN" bench stages "$dir" > "$OUT/stages.txt" 2>&1 && tail -3 "$OUT/stages.txt"
exit $status
