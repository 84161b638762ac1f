#!/usr/bin/env bash
# On the GPU machine, from the repository root: Connect Four strongly solved,
# whole builds on one GPU (forward search, solves, counts and files).
# 1. `tbforge bench gpu connect4` on 6x5 (CHECK_BOARD): connect4_expand and
#    connect4_solve against their CPU twins on fresh random inputs, and the
#    board's whole search and solve.
# 2. COMPARE boards (default "5x5 6x4"): CPU and CUDA builds byte-identical
#    (every file, manifest included), verify --deep; 5x5's ply 25 losses
#    among its reachable positions.
# 3. FAST boards (default 6x5): the whole build timed (goal: 10 s), the build
#    log's stages per ply, reachable positions per ply against Edelkamp's "BDDs for Minimal Perfect Hashing"
#    Table 0.8; then RESUME_KILLS (default "1 2 3"): the same build killed
#    after that many seconds, each time resumed, identical at the end.
# 4. BIG boards (default 6x6; "none" to skip): the whole build timed with
#    peak host and device memory (goal: 10 minutes), index size and reachable
#    positions per ply against Table 0.8 and Tromp's total, the first
#    player's result at the start, verify --deep, the files' size.
#    BIG_PHASE=start launches the build detached and returns; BIG_PHASE=report
#    waits for it (per GPU.md: one call is at most 10 minutes) and reports;
#    unset: both in one call. SKIP_VERIFY=1 leaves out verify --deep (7 min
#    at 6x6 on the H100).
# The binary is built elsewhere (no Rust on the GPU machine):
#   cargo build --release
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/*.sh .device/
. "$(dirname "$0")/gpu_env.sh" tbforge-c4-whole
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "== $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(df -BG --output=avail "$WORK" | tail -1) free in $WORK"

# Per-ply checks of a finished directory against the published tables.
# Source: Edelkamp, "BDDs for minimal perfect hashing", Table 0.8 (reachable
#   states of Connect Four per layer, 6x6, 6x5, 5x5 columns).
# Source: J. Tromp, "John's Connect Four Playground": 69,173,028,785 positions
#   of 6x6 (the sum of Table 0.8's 6x6 column; its printed total,
#   69,212,342,175, is not that sum: a typo in the total, not in a layer).
check_plies() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d, board = sys.argv[1], sys.argv[2]
t66 = [1, 6, 36, 156, 651, 2256, 7876, 24330, 74922, 211042, 576266, 1468114, 3596076, 8394784,
       18629174, 39979044, 80684814, 159433890, 292803624, 531045746, 884124974, 1463364020,
       2196180492, 3286589804, 4398259442, 5862955926, 6891603916, 8034014154, 8106160185,
       7994700764, 6636410522, 5261162538, 3435759942, 2095299732, 998252492, 401230354, 90026720]
t65 = [1, 6, 36, 156, 651, 2256, 7870, 24120, 72312, 194122, 502058, 1202338, 2734506, 5868640,
       11812224, 22771514, 40496484, 69753028, 108862608, 165943600, 224098249, 296344032, 338749998,
       378092536, 352607428, 314710752, 224395452, 149076078, 74046977, 30162078, 6440532]
t55 = [1, 5, 25, 95, 345, 1075, 3350, 9355, 25060, 60842, 139632, 299764, 596136, 1128408, 1948956,
       3231341, 4769837, 6789890, 8396345, 9955530, 9812925, 9020543, 6632480, 4345913, 2011598, 584249]
table = {"6x6": t66, "6x5": t65, "5x5": t55}.get(board)
m = json.load(open(d + "/manifest.json"))
files = sorted(m["files"], key=lambda f: f["partition"])
ok = True
print("| ply | index size | reachable | index / reachable | Table 0.8 | wins | draws | losses |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
for f in files:
    n = f["partition"]
    want = table[n] if table else None
    got = f["reachable"]
    if want is not None and got != want:
        ok = False
    # Layered: every stored (nonzero) index is a reachable position.
    if f["classes"] != got:
        ok = False
    print("| %d | %d | %d | %.1f | %s%s | %d | %d | %d |" % (n, f["index_size"], got, f["index_size"] / max(got, 1),
          "-" if want is None else want, "" if want in (None, got) else " MISMATCH", f["wins"], f["draws"], f["losses"]))
total = sum(f["reachable"] for f in files)
print("reachable in total: %d%s" % (total, " (Table 0.8 sum %d)" % sum(table) if table else ""))
if board == "6x6" and total != 69173028785:
    ok = False
if board == "5x5":
    p25 = files[25]
    print("5x5 ply 25: %d losses among %d reachable" % (p25["losses"], p25["reachable"]))
    ok &= p25["reachable"] == 584249 and p25["losses"] == 244812
print("per-ply check:", "ok" if ok else "FAILED")
sys.exit(0 if ok else 1)
PY
}

same_dirs() {
  local a=$1 b=$2 bad=0
  for f in "$a"/*; do
    name=$(basename "$f"); [ "$name" = build-log.json ] && continue
    cmp -s "$f" "$b/$name" || { echo "MISMATCH $name"; bad=1; }
  done
  [ "$(ls "$a" | wc -l)" = "$(ls "$b" | wc -l)" ] || { echo "MISMATCH: file sets differ"; bad=1; }
  return $bad
}

# The arguments of `tbforge build` for board WxH (time -v runs the binary itself).
args() { echo "connect4 --param width=${1%x*} --param height=${1#*x}"; }

if [ -z "${BIG_PHASE:-}" ]; then
  if [ -n "${CHECK_BOARD-6x5}" ]; then
    b=${CHECK_BOARD-6x5}
    "$BIN" bench gpu connect4 --param "width=${b%x*}" --param "height=${b#*x}" --work-log2 "${WORK_LOG2:-24}" \
      --cpu-max-size "${CPU_MAX:-200000000}" 2>"$OUT/check.err" | tee "$OUT/check.txt" || { status=1; tail -3 "$OUT/check.err"; }
  fi
  for b in ${COMPARE-5x5 6x4}; do
    for backend in cpu cuda; do
      rm -rf "$WORK/$backend-$b"
      /usr/bin/time -f "%e" -o "$OUT/time-$backend-$b" "$BIN" build $(args "$b") --backend "$backend" --out "$WORK/$backend-$b" --json >"$OUT/$backend-$b.json" 2>"$OUT/$backend-$b.err" || { status=1; tail -3 "$OUT/$backend-$b.err"; }
    done
    same_dirs "$WORK/cpu-$b" "$WORK/cuda-$b" && same=identical || { same=DIFFERENT; status=1; }
    "$BIN" verify "$WORK/cuda-$b" --deep >"$OUT/verify-$b.txt" 2>&1 && ver=ok || { ver=FAILED; status=1; tail -3 "$OUT/verify-$b.txt"; }
    echo "== $b: CPU $(cat "$OUT/time-cpu-$b") s, CUDA $(cat "$OUT/time-cuda-$b") s, bytes $same, verify --deep $ver"
    check_plies "$WORK/cuda-$b" "$b" >"$OUT/plies-$b.txt" || status=1
    tail -3 "$OUT/plies-$b.txt"
  done
  for b in ${FAST-6x5}; do
    dir="$WORK/fast-$b"
    rm -rf "$dir"
    /usr/bin/time -f "%e s wall, %M KB peak host" -o "$OUT/time-fast-$b" "$BIN" build $(args "$b") --backend cuda --out "$dir" --json >"$OUT/fast-$b.json" 2>"$OUT/fast-$b.err" || { status=1; tail -3 "$OUT/fast-$b.err"; }
    echo "== $b whole build on the GPU: $(cat "$OUT/time-fast-$b")"
    "$BIN" bench stages "$dir" | tee "$OUT/stages-$b.txt"
    python3 -c "import json,sys; l=json.load(open(sys.argv[1])); print('build %.2f s, forward %.2f s, peak RSS %.2f GB, accelerator %s' % (l['seconds'], l['forward_seconds'], (l.get('peak_rss') or 0)/1e9, l.get('accelerator')))" "$dir/build-log.json"
    check_plies "$dir" "$b" >"$OUT/plies-$b.txt" || status=1
    cat "$OUT/plies-$b.txt"
    rm -rf "$WORK/resumed-$b"
    for k in ${RESUME_KILLS-1 2 3}; do
      timeout -s KILL "$k" "$BIN" build connect4 --param "width=${b%x*}" --param "height=${b#*x}" --backend cuda --out "$WORK/resumed-$b" --resume --json >/dev/null 2>>"$OUT/resume.err"
      echo "killed after $k s: $(ls "$WORK/resumed-$b" 2>/dev/null | grep -c tbf) files written"
    done
    "$BIN" build $(args "$b") --backend cuda --out "$WORK/resumed-$b" --resume --json >/dev/null 2>>"$OUT/resume.err" || { status=1; tail -3 "$OUT/resume.err"; }
    same_dirs "$dir" "$WORK/resumed-$b" && echo "== $b killed and resumed: identical to the uninterrupted build" || status=1
    rm -rf "$WORK/resumed-$b" "$WORK"/cpu-* "$WORK"/cuda-*
  done
fi

for b in ${BIG-6x6}; do
  [ "$b" = none ] && continue
  dir="$WORK/big-$b"
  if [ "${BIG_PHASE:-start}" = start ] || [ -z "${BIG_PHASE:-}" ]; then
    rm -rf "$dir"
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 >"$WORK/gpumem-$b.txt" 2>/dev/null &
    echo $! >"$WORK/smi-$b.pid"
    setsid nohup /usr/bin/time -v "$BIN" build connect4 --param "width=${b%x*}" --param "height=${b#*x}" --backend cuda --out "$dir" --json \
      >"$WORK/big-$b.json" 2>"$WORK/big-$b.err" </dev/null &
    echo "== $b build started at $(date -u +%T)"
    [ "${BIG_PHASE:-}" = start ] && continue
  fi
  # Report: wait for the build (its time -v summary ends the error log).
  for _ in $(seq 1 "${WAIT_S:-560}"); do
    grep -q 'Exit status' "$WORK/big-$b.err" 2>/dev/null && break
    sleep 1
  done
  if ! grep -q 'Exit status' "$WORK/big-$b.err"; then
    echo "== $b still building at $(date -u +%T): $(ls "$dir" 2>/dev/null | grep -c tbf) files so far"
    tail -c 300 "$WORK/big-$b.err"; echo
    status=1
    continue
  fi
  kill "$(cat "$WORK/smi-$b.pid")" 2>/dev/null
  grep -E 'Exit status|Elapsed|Maximum resident' "$WORK/big-$b.err"
  grep -q 'Exit status: 0' "$WORK/big-$b.err" || { status=1; grep -v '^\s' "$WORK/big-$b.err" | tail -5; }
  echo "== $b: peak device memory $(sort -n "$WORK/gpumem-$b.txt" | tail -1) MiB, files $(du -sb "$dir" | awk '{printf "%.2f GB", $1/1e9}')"
  python3 -c "import json,sys; l=json.load(open(sys.argv[1])); print('build %.1f s, forward %.1f s, peak RSS %.1f GB' % (l['seconds'], l['forward_seconds'], (l.get('peak_rss') or 0)/1e9))" "$dir/build-log.json"
  "$BIN" bench stages "$dir" | tee "$OUT/stages-$b.txt"
  check_plies "$dir" "$b" | tee "$OUT/plies-$b.txt" || status=1
  "$BIN" probe "$dir" "" | tee "$OUT/probe-$b.txt" | head -12
  if [ "${SKIP_VERIFY:-}" != 1 ]; then
    /usr/bin/time -f "verify --deep %e s" "$BIN" verify "$dir" --deep >"$OUT/verify-$b.txt" 2>&1 || { status=1; echo "verify $b FAILED"; }
    tail -2 "$OUT/verify-$b.txt"
  fi
  "$BIN" info "$dir" | grep -v '\.tbf' | head -12
done
echo "gpu_connect4_whole exit status $status"
exit $status
