#!/usr/bin/env bash
# Search throughput (`tbforge analyse`, issue 20): from the checkers opening,
# 10 seconds on one thread and on every core (nodes/s, depth reached, score
# and move), the time to a fixed depth on both (what lazy SMP's shared table
# buys), and perft 10/11 (move generation alone, on every core). Run from the
# repository root with the binary built elsewhere:
#   cargo build --release && mkdir -p .device && strip -o .device/tbforge target/release/tbforge
#   cp scripts/bench_search.sh .device/ && bash .device/bench_search.sh
# Settings: BIN (default .device/tbforge), SECONDS_EACH (default 10), DEPTH
# (default 20), TB (a checkers tablebase directory to probe; default none).
set -uo pipefail
BIN=${BIN:-.device/tbforge}
T=${SECONDS_EACH:-10}
D=${DEPTH:-20}
cores=$(nproc)
tb=()
[ -n "${TB:-}" ] && tb=(--tb "$TB")
row() {
  python3 - "$1" "$2" <<'PY'
import json, sys
t, v = sys.argv[1], json.loads(sys.argv[2])
s = v["score"]
score = s["eval"] if s["eval"] is not None else f'{s["outcome"]} {s["plies"]}'
print(f'{t:<10} {v["seconds"]:8.2f} {v["depth"]:6d} {v["nodes"]:14,d} {v["nodes_per_second"]/1e6:12.2f} {str(score):>8} {v["best_move"]}')
PY
}
echo "== host: $cores cores; checkers opening, --time $T"
printf '%-10s %8s %6s %14s %12s %8s %s\n' threads seconds depth nodes "M nodes/s" score move
for t in 1 "$cores"; do
  out=$("$BIN" analyse checkers --time "$T" --threads "$t" "${tb[@]}" --json) || { echo "analyse failed"; exit 1; }
  row "$t" "$out"
done
echo "== checkers opening, --depth $D (time to depth)"
printf '%-10s %8s %6s %14s %12s %8s %s\n' threads seconds depth nodes "M nodes/s" score move
for t in 1 "$cores"; do
  out=$(timeout 300 "$BIN" analyse checkers --depth "$D" --threads "$t" "${tb[@]}" --json) || { echo "analyse failed or over 300 s"; continue; }
  row "$t" "$out"
done
for d in 10 11; do
  "$BIN" analyse checkers --perft "$d"
done
