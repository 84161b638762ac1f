#!/usr/bin/env bash
# On the GPU machine, from the repository root: builds as a smaller card
# would run them (the streamed-pipeline issue). `--gpu-mem-limit` makes the
# device act as a card of that size; partitions whose in-memory kernel
# solve needs more go through the streamed pipeline, the others are solved
# in memory.
# 1. A routed build that finishes: Morris max=ROUTED_MAX (default 4) on the
#    whole device, then with --gpu-mem-limit W - 1 (W: the largest working
#    set, so the largest partition streams and the rest fits), then the same
#    killed (SIGKILL) halfway and resumed: files compared, streamed
#    partitions and times printed. (The limit applies to every kernel of
#    the build: far below W, the in-memory solves no longer fit either;
#    Connect Four's forward search on the device needs more than W.)
# 2. Unless CARD=0: Morris MAX (default 8) on the whole device (with TBFORGE_TWIN_TRACE:
#    each partition's pending and event counts, in $OUT/whole.txt), then
#    under GPU_LIMIT / HOST_LIMIT (default 24G / 32G) within CARD_TIMEOUT
#    seconds (default 240): compared if it finishes, else where it stood
#    (partitions finished, the pass under way) from its build state, which
#    is also sampled every 10 s into $OUT/card-progress.txt.
#   bash scripts/gpu_workstation_card.sh
. "$(dirname "$0")/gpu_env.sh" tbforge-workstation
max=${MAX:-8}
gpu_limit=${GPU_LIMIT:-24G}
host_limit=${HOST_LIMIT:-32G}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "== $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"

# build NAME SECONDS ARGS...: a row of the table, or why there is none.
build() {
  local name=$1 limit=$2; shift 2
  case " $* " in *" --resume "*) ;; *) rm -rf "$WORK/$name" ;; esac
  local t0=$(date +%s.%N)
  timeout "$limit" "$BIN" build "$@" --backend cuda --out "$WORK/$name" > "$OUT/$name.txt" 2>&1
  local rc=$?
  local wall=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
  if [ $rc -ne 0 ]; then
    echo "   | $name | stopped after $wall s (exit $rc) | | | |"
    python3 - "$WORK/$name/.tbforge-build.json" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"     no build state ({e})"); sys.exit()
cur = s.get("current")
print(f"     {len(s['finished'])} partitions finished;",
      f"slot {cur[0]} under way at pass {cur[1]['next_pass']}" if cur else "none under way in the pipeline")
PY
    tail -2 "$OUT/$name.txt" | sed 's/^/     /'
    status=1
    return
  fi
  python3 - "$WORK/$name/build-log.json" "$name" "$wall" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
ws = log.get("largest_working_set")
piped = [p for p in log["partitions"] if p["solver"] == "external"]
passes = sum(len(p.get("pipeline_passes", [])) for p in piped)
pipe_s = sum(p["solve_seconds"] for p in piped)
print("   | %s | %.2f s | %s | %s | %d of %d (%d indices), %d passes, %.1f s |" % (
    sys.argv[2], log["seconds"], log["mode"], "%.2f GB" % (ws / 1e9) if ws else "-",
    len(piped), len(log["partitions"]), sum(p["index_size"] for p in piped), passes, pipe_s))
PY
}
same() {
  if [ -f "$WORK/$2/manifest.json" ] && diff -r -x build-log.json "$WORK/$1" "$WORK/$2" > /dev/null; then
    echo "   $2: files identical to $1 ($(ls "$WORK/$2" | wc -l) files)"
  else
    echo "   $2: files DIFFERENT or missing"; status=1
  fi
}
working_set() { python3 -c "import json;print(json.load(open('$WORK/$1/build-log.json')).get('largest_working_set') or 0)"; }

header() {
  echo "   | build | seconds | mode | largest working set | streamed partitions, their passes and seconds |"
  echo "   | --- | ---: | --- | ---: | --- |"
}
rmax=${ROUTED_MAX:-4}
echo "== 1. routed builds: Morris max=$rmax on the whole device, then --gpu-mem-limit W - 1"
header
build routed-whole 300 morris --param max=$rmax
w=$(working_set routed-whole)
build routed 400 morris --param max=$rmax --gpu-mem-limit $((w - 1)) --disk "$WORK/routed-d1" --disk "$WORK/routed-d2"
same routed-whole routed
t=$(python3 -c "import json;print(json.load(open('$WORK/routed/build-log.json'))['seconds'])" 2>/dev/null || echo 60)
rm -rf "$WORK/killed" "$WORK"/killed-d*
"$BIN" build morris --param max=$rmax --backend cuda --gpu-mem-limit $((w - 1)) --disk "$WORK/killed-d1" --checkpoint-every 0 --out "$WORK/killed" > "$OUT/killed.txt" 2>&1 &
pid=$!
sleep "$(python3 -c "print(round($t * 0.6, 1))")"
kill -9 $pid 2>/dev/null && echo "   killed (SIGKILL) after $(python3 -c "print(round($t * 0.6, 1))") s: $(python3 -c "import json;s=json.load(open('$WORK/killed/.tbforge-build.json'));print(len(s['finished']), 'partitions finished, checkpoint', s.get('current') and (s['current'][0], s['current'][1]['next_pass']))" 2>&1)"
wait $pid 2>/dev/null
build killed 400 morris --param max=$rmax --gpu-mem-limit $((w - 1)) --disk "$WORK/killed-d1" --checkpoint-every 0 --resume
same routed-whole killed
[ "${CARD:-1}" = 0 ] && exit $status

echo "== 2. Morris max=$max: the whole device, then --gpu-mem-limit $gpu_limit --mem-limit $host_limit"
header
TBFORGE_TWIN_TRACE=1 build whole 300 morris --param max="$max"
( while sleep 10; do
    echo "$(date +%T) $(python3 -c "import json;s=json.load(open('$WORK/card/.tbforge-build.json'));c=s.get('current');print(len(s['finished']),'finished', c and (c[0], c[1]['next_pass'], (c[1].get('within') or {}).get('step')))" 2>/dev/null)"
  done > "$OUT/card-progress.txt" ) &
sampler=$!
TBFORGE_TWIN_TRACE=1 build card "${CARD_TIMEOUT:-240}" morris --param max="$max" --gpu-mem-limit "$gpu_limit" --mem-limit "$host_limit"
kill $sampler 2>/dev/null
tail -4 "$OUT/card-progress.txt" | sed 's/^/   progress /'
[ -f "$WORK/card/manifest.json" ] && same whole card
echo "== partitions solved in memory with lists smaller than their pending positions (card)"
grep -E "lists of [0-9]+ entries" "$OUT/card.txt" | sed 's/^/   /'
echo "== first scans of the largest partitions (whole device): pending and events per index"
python3 - "$OUT/whole.txt" "$WORK/whole/build-log.json" <<'PY'
import json, re, sys
sizes = {p["name"]: p["index_size"] for p in json.load(open(sys.argv[2]))["partitions"]}
rows = []
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"gpu (\S+): first scan .* (\d+) events, (\d+) pending", line)
    if m and sizes.get(m.group(1)):
        n = sizes[m.group(1)]
        rows.append((n, m.group(1), int(m.group(2)) / n, int(m.group(3)) / n))
print("   | partition | indices | events / index | pending / index |")
print("   | --- | ---: | ---: | ---: |")
for n, name, e, p in sorted(rows, reverse=True)[:8]:
    print(f"   | {name} | {n} | {e:.3f} | {p:.3f} |")
PY
exit $status
