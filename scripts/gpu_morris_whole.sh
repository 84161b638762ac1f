#!/usr/bin/env bash
# On the GPU machine, from the repository root: Nine Men's Morris as a whole
# game (phase I, placing, from the empty board; then phases II/III).
# 1. `tbforge bench gpu morris --work-log2 WORK_LOG2` (default 24): the
#    phase I kernels (place_solve, place_expand) and the phase II ones against
#    their CPU twins on fresh random inputs.
# 2. pieces=COMPARE (default "5"): CPU and CUDA builds byte-identical
#    (every file, manifest included), verify --deep.
# 3. pieces=BIG (default 9): the whole game from nothing on the GPU, timed,
#    peak host and device memory, the build log's stage table summed per
#    depth, `tbforge info` (reached classes, positions, W/D/L per depth),
#    verify --deep; then the start position, the 24 first placements and,
#    for every first placement, black's replies that lose (depth 2).
# The binary is built elsewhere (no Rust on the GPU machine):
#   cargo build --release
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/*.sh .device/
. "$(dirname "$0")/gpu_env.sh" tbforge-morris-whole
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "== $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"
if [ "${SKIP_CHECK:-}" != 1 ]; then
  "$BIN" bench gpu morris --param max="${CHECK_MAX:-5}" --work-log2 "${WORK_LOG2:-24}" 2>"$OUT/check.err" | tee "$OUT/check.txt" || { status=1; tail -3 "$OUT/check.err"; }
fi
for n in ${COMPARE-5}; do
  for backend in cpu cuda; do
    rm -rf "$WORK/$backend-$n"
    /usr/bin/time -f "%e" -o "$OUT/time-$backend-$n" "$BIN" build morris --param pieces="$n" --backend "$backend" --out "$WORK/$backend-$n" --json >"$OUT/$backend-$n.json" 2>"$OUT/$backend-$n.err" || { status=1; tail -3 "$OUT/$backend-$n.err"; }
  done
  bad=0
  for f in "$WORK/cpu-$n"/*; do
    name=$(basename "$f"); [ "$name" = build-log.json ] && continue
    cmp -s "$f" "$WORK/cuda-$n/$name" || { echo "MISMATCH pieces=$n: $name"; bad=1; }
  done
  [ "$(ls "$WORK/cpu-$n" | wc -l)" = "$(ls "$WORK/cuda-$n" | wc -l)" ] || { echo "MISMATCH pieces=$n: file sets differ"; bad=1; }
  [ $bad = 0 ] && same=identical || { same=DIFFERENT; status=1; }
  "$BIN" verify "$WORK/cuda-$n" --deep >"$OUT/verify-$n.txt" 2>&1 && ver=ok || { ver=FAILED; status=1; tail -3 "$OUT/verify-$n.txt"; }
  echo "== pieces=$n: CPU $(cat "$OUT/time-cpu-$n") s, CUDA $(cat "$OUT/time-cuda-$n") s, bytes $same, verify --deep $ver"
done
for n in ${BIG-9}; do
  dir="$WORK/whole-$n"
  rm -rf "$dir"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$OUT/gpumem-$n.txt" 2>/dev/null &
  smi=$!
  start=$(date +%s.%N)
  /usr/bin/time -v "$BIN" build morris --param pieces="$n" --backend cuda --out "$dir" --json >"$OUT/build-$n.json" 2>"$OUT/build-$n.err" || { status=1; tail -5 "$OUT/build-$n.err"; }
  end=$(date +%s.%N)
  kill $smi 2>/dev/null
  echo "== morris pieces=$n: $(python3 -c "print('%.1f' % ($end - $start))") s wall, peak host RSS $(grep 'Maximum resident' "$OUT/build-$n.err" | awk '{printf "%.1f GiB", $6/1048576}'), peak device memory $(sort -n "$OUT/gpumem-$n.txt" | tail -1) MiB"
  python3 - "$dir/build-log.json" <<'PY'
import json, re, sys
from collections import defaultdict
log = json.load(open(sys.argv[1]))
print("build %.1f s; search %s" % (log["seconds"], {k: v for k, v in log.items() if "search" in k or "bfs" in k}))
rows = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
for p in log.get("partitions", []):
    m = re.match(r"t(\d+)-", p["name"])
    key = "t=%s" % int(m.group(1)) if m else "phase II/III"
    w = p
    r = rows[key]
    r[0] += 1
    r[1] += w.get("solve_seconds") or 0
    r[2] += w.get("device_seconds") or 0
    r[3] += w.get("count_seconds") or 0
    r[4] += w.get("write_seconds") or 0
print("%-12s %5s %9s %9s %9s %9s" % ("depth", "parts", "solve s", "device s", "count s", "write s"))
for k in sorted(rows, key=lambda k: (k != "phase II/III", int(k[2:]) if k.startswith("t=") else 0)):
    r = rows[k]
    print("%-12s %5d %9.2f %9.2f %9.2f %9.2f" % (k, r[0], r[1], r[2], r[3], r[4]))
PY
  "$BIN" info "$dir" >"$OUT/info-$n.txt"; grep -v '\.tbf' "$OUT/info-$n.txt" | head -60
  /usr/bin/time -f "verify --deep %e s" "$BIN" verify "$dir" --deep >"$OUT/verify-big-$n.txt" 2>&1 || { status=1; echo "verify pieces=$n FAILED"; tail -3 "$OUT/verify-big-$n.txt"; }
  tail -2 "$OUT/verify-big-$n.txt"
  du -sb "$dir" | awk '{printf "files %.2f GB\n", $1/1e9}'
  "$BIN" probe "$dir" "W:;B:;w;h=$n,$n" | head -30
  for p in a1 a4 a7 b2 b4 b6 c3 c4 c5 d1 d2 d3 d5 d6 d7 e3 e4 e5 f2 f4 f6 g1 g4 g7; do
    "$BIN" probe "$dir" "W:$p;B:;b;h=$((n-1)),$n" >"$OUT/probe-$p.txt" 2>&1 || status=1
    losing=$(awk 'NR>3 && /loss in/ {printf "%s(%s) ", $1, $4}' "$OUT/probe-$p.txt")
    echo "after $p: $(sed -n 3p "$OUT/probe-$p.txt"); black's losing replies: ${losing:-none}"
  done
done
echo "gpu_morris_whole exit status $status"
exit $status
