#!/usr/bin/env bash
# On the GPU machine, from the repository root: Nine Men's Morris as a whole
# game (phase I, placing, from the empty board; then phases II/III).
# 1. `tbforge bench gpu morris --work-log2 WORK_LOG2` (default 24): the
#    phase I kernels (place_solve, place_expand) and the phase II ones against
#    their CPU twins on fresh random inputs.
# 2. pieces=COMPARE (default "5"): CPU and CUDA builds byte-identical
#    (every file, manifest included), verify --deep.
# 2b. pieces=RESUME (default 6): killed and resumed, byte-identical.
# 3. pieces=BIG (default 9): the whole game from nothing on the GPU, timed,
#    peak host and device memory, the build log's stage table summed per
#    depth, `tbforge info` (reached classes, positions, W/D/L per depth),
#    verify --deep; then the start position (its 24 first placements) and, at
#    depth 2 (after one placement each), white's placements that lose.
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
# pieces=RESUME (default 6): a CUDA build killed RESUME_KILLS seconds after
# each start (default "2 4"), resumed, against an uninterrupted one.
for n in ${RESUME-6}; do
  rm -rf "$WORK/plain-$n" "$WORK/resumed-$n"
  "$BIN" build morris --param pieces="$n" --backend cuda --out "$WORK/plain-$n" --json >/dev/null 2>"$OUT/plain-$n.err" || status=1
  for k in ${RESUME_KILLS-2 4}; do
    timeout -s KILL "$k" "$BIN" build morris --param pieces="$n" --backend cuda --out "$WORK/resumed-$n" --resume --json >/dev/null 2>>"$OUT/resume.err"
    echo "killed after $k s: $(ls "$WORK/resumed-$n" | grep -c tbf) files written"
  done
  "$BIN" build morris --param pieces="$n" --backend cuda --out "$WORK/resumed-$n" --resume --json >/dev/null 2>>"$OUT/resume.err" || status=1
  bad=0
  for f in "$WORK/plain-$n"/*; do
    name=$(basename "$f"); [ "$name" = build-log.json ] && continue
    cmp -s "$f" "$WORK/resumed-$n/$name" || { echo "MISMATCH resumed pieces=$n: $name"; bad=1; }
  done
  [ $bad = 0 ] && echo "== pieces=$n killed and resumed: identical to the uninterrupted build" || status=1
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
log = log.get("builds", [log])[0] if "builds" in log else log
print("build %.1f s, forward search %.1f s" % (log["seconds"], log.get("forward_seconds", 0)))
# Seed 000 Table 2, software RAID (GTX 285 + Core i7, 2010): BFS and retrograde seconds per depth.
seed = {1: (0, 0), 2: (0, 0), 3: (0, 0), 4: (0, 0), 5: (0, 0), 6: (1, 1), 7: (4, 4), 8: (17, 17),
        9: (53, 52), 10: (171, 163), 11: (390, 388), 12: (909, 885), 13: (1583, 1554),
        14: (2838, 2828), 15: (4047, 4021), 16: (5743, 5996), 17: (7219, 6996), 18: (None, 16141)}
fwd = log.get("forward_depth_seconds", [])
rows = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
for p in log.get("partitions", []):
    m = re.match(r"t(\d+)-", p["name"])
    key = int(m.group(1)) if m else 99
    r = rows[key]
    r[0] += 1
    r[1] += p.get("solve_seconds") or 0
    r[2] += p.get("device_seconds") or 0
    r[3] += (p.get("count_seconds") or 0) + (p.get("write_seconds") or 0)
print("| depth t | partitions | forward into t (s) | backward at t (s) | of which device (s) | count+write (s) | seed BFS (s) | seed retrograde (s) |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
for t in range(1, 19):
    r = rows.get(t, [0, 0.0, 0.0, 0.0])
    f = fwd[t - 1] if t - 1 < len(fwd) else None
    sb, sr = seed[t]
    cell = lambda x: "-" if x is None else ("<1" if x == 0 else str(x))
    print("| %d | %d | %s | %.2f | %.2f | %.2f | %s | %s |" % (t, r[0], "-" if f is None else "%.2f" % f, r[1], r[2], r[3], cell(sb), cell(sr)))
r = rows[99]
print("| phase II/III | %d | - | %.2f | %.2f | %.2f | - | 327,000 (Table 1 sum, 3 d 19 h) |" % (r[0], r[1], r[2], r[3]))
PY
  "$BIN" info "$dir" >"$OUT/info-$n.txt"; grep -v '\.tbf' "$OUT/info-$n.txt" | head -60
  /usr/bin/time -f "verify --deep %e s" "$BIN" verify "$dir" --deep >"$OUT/verify-big-$n.txt" 2>&1 || { status=1; echo "verify pieces=$n FAILED"; tail -3 "$OUT/verify-big-$n.txt"; }
  tail -2 "$OUT/verify-big-$n.txt"
  du -sb "$dir" | awk '{printf "files %.2f GB\n", $1/1e9}'
  "$BIN" probe "$dir" "W:;B:;w;h=$n,$n" | head -30
  # Depth 2: after white's first placement (one per symmetry class: outer
  # corner a1, outer middle a4, middle-square corner b2, middle-square middle
  # b4) and each black reply, white's placements that lose, with distances.
  for p in a1 a4 b2 b4; do
    for q in a1 a4 a7 b2 b4 b6 c3 c4 c5 d1 d2 d3 d5 d6 d7 e3 e4 e5 f2 f4 f6 g1 g4 g7; do
      [ "$p" = "$q" ] && continue
      "$BIN" probe "$dir" "W:$p;B:$q;w;h=$((n-1)),$((n-1))" >"$OUT/probe.txt" 2>&1 || { status=1; tail -1 "$OUT/probe.txt"; }
      losing=$(awk 'NR>3 && /loss in/ {printf "%s(%s) ", $1, $4}' "$OUT/probe.txt")
      echo "W:$p;B:$q: $(sed -n 3p "$OUT/probe.txt"); losing placements: ${losing:-none}"
    done
  done
done
echo "gpu_morris_whole exit status $status"
exit $status
