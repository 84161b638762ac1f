#!/usr/bin/env bash
# On the GPU machine, from the repository root: Fox-and-Geese on the GPU (kernels/foxandgeese.cu)
# against its CPU twin (foxandgeese::twin::LevelSolver) and against Table 0.7 of S. Edelkamp's
# "BDDs for Minimal Perfect Hashing".
# 1. `tbforge bench gpu foxandgeese --param geese=CHECK_GEESE` (default 9): fg_check against the
#    twin on fresh random indices of every level (unrank, rank, moves, captures, steps back), then
#    every level 0..CHECK_GEESE solved on the GPU and by the twin on all cores, bytes and passes
#    compared, with both rates.
# 2. `tbforge build foxandgeese --param geese=CMP_GEESE` (default 9) with --backend cpu (16 cores)
#    and --backend cuda, timed, every file compared with cmp (build-log.json aside: timings).
# 3. Every level, 1 to FG_GEESE (default 31), built with --backend cuda and checked against
#    Table 0.7 by scripts/bench_puzzles23.sh (FG_BACKEND=cuda SKIP_FT=1), which prints the rows
#    and the seconds of each level; the issue's goal is all 31 levels in 30 minutes.
# Prints the tables and exits 1 on any mismatch or failed run.
# Measured (one H200, 16 cores, session 17): part 1 10 s, 0 mismatched, levels 8 and 9 44x the
# twin; part 2 10.0 s CPU vs 1.0 s GPU, identical files; part 3 all 31 levels in 350 s (about
# 520 s with `info --players` reading them back): `start` then one `poll`.
# Build elsewhere (no Rust on the GPU machine):
#   cargo build --release && mkdir -p .device && strip -o .device/tbforge target/release/tbforge
#   bash scripts/gpu_foxandgeese.sh start     (then, if part 3 has not ended: bash scripts/gpu_foxandgeese.sh poll)
# SKIP_CHECK=1, SKIP_CMP=1 or SKIP_FULL=1 leave a part out; SEED replays the check's inputs.
mode=${1:-start}
. "$(dirname "$0")/gpu_env.sh" tbforge-foxandgeese
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/host.txt"
echo "== $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, binary $BIN"

if [ "$mode" = start ] && [ "${SKIP_CHECK:-}" != 1 ]; then
  echo "== bench gpu foxandgeese, geese=${CHECK_GEESE:-9}"
  seed=()
  [ -n "${SEED:-}" ] && seed=(--seed "$SEED")
  "$BIN" bench gpu foxandgeese --param geese="${CHECK_GEESE:-9}" "${seed[@]}" || status=1
fi

if [ "$mode" = start ] && [ "${SKIP_CMP:-}" != 1 ]; then
  n=${CMP_GEESE:-9}
  declare -A secs
  for backend in cpu cuda; do
    dir="$WORK/cmp-$backend"
    rm -rf "$dir"
    start=$(date +%s.%N)
    "$BIN" build foxandgeese --param geese="$n" --backend "$backend" --out "$dir" --json \
      >"$OUT/cmp-$backend.json" 2>"$OUT/cmp-$backend.err" || { status=1; tail -3 "$OUT/cmp-$backend.err"; }
    secs[$backend]=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$start" "$(date +%s.%N)")
  done
  same=yes
  for f in "$WORK/cmp-cpu"/*; do
    name=$(basename "$f")
    [ "$name" = build-log.json ] && continue
    cmp -s "$f" "$WORK/cmp-cuda/$name" || { same=NO; echo "differs: $name"; }
  done
  [ "$(ls "$WORK/cmp-cpu" | wc -l)" = "$(ls "$WORK/cmp-cuda" | wc -l)" ] || same=NO
  [ "$same" = yes ] || status=1
  echo
  echo "| build foxandgeese geese=$n | CPU $(nproc) threads s | GPU s | ratio | files identical |"
  echo "| --- | ---: | ---: | ---: | --- |"
  python3 -c "import sys; c, g = float(sys.argv[1]), float(sys.argv[2]); print(f'| levels 0..$n | {c:.2f} | {g:.2f} | {c / g:.1f}x | $same |')" \
    "${secs[cpu]}" "${secs[cuda]}"
  echo
fi

# Part 3 runs in its own process session (GPU.md, "Long runs"): `start` launches it after parts
# 1 and 2 and polls for up to POLL seconds (default 300); `poll` (a later call on the same warm
# machine) waits up to POLL seconds (default 540) more and prints the table once it has ended.
full_log="$WORK/full.log"
if [ "${SKIP_FULL:-}" != 1 ] && [ "$mode" = start ]; then
  rm -rf "$WORK/full"
  date +%s >"$WORK/full.start"
  FG_BACKEND=cuda SKIP_FT=1 FG_GEESE="${FG_GEESE:-31}" FG_RUN_SECONDS=100000 OUT="$WORK/full-out" \
    WORK="$WORK/full" setsid nohup bash "$(dirname "$0")/bench_puzzles23.sh" >"$full_log" 2>&1 </dev/null &
  echo $! >"$WORK/full.pid"
fi
if [ "${SKIP_FULL:-}" != 1 ]; then
  [ "$mode" = start ] && poll=${POLL:-300} || poll=${POLL:-540}
  deadline=$(( $(date +%s) + poll ))
  pid=$(cat "$WORK/full.pid")
  while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 3; done
  levels=$(ls "$WORK/full/foxandgeese-${FG_GEESE:-31}" 2>/dev/null | grep -c '\.tbf$')
  echo "== every level on the GPU: $(( $(date +%s) - $(cat "$WORK/full.start") )) s since start, $levels files, $(free -g | awk '/Mem:/{print $3}') GiB host memory used"
  if kill -0 "$pid" 2>/dev/null; then
    echo "   still running (poll again: bash $0 poll)"
    tail -c 400 "$WORK/full-out/fg.err" 2>/dev/null | tr '\r' '\n' | tail -2
  else
    cat "$full_log"
    cp -r "$full_log" "$WORK/full-out" "$OUT/" 2>/dev/null
    grep -q "Fox-and-Geese: States as published" "$full_log" || status=1
  fi
fi
exit $status
