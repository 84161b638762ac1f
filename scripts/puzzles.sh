#!/usr/bin/env bash
# The puzzle instances too large for CI (seed 001 Table 0.4 in full, seed 002 Tables 1, 3, 4):
# runs the ignored tests of tests/puzzle_*.rs, which assert the published numbers and print
# sizes, times and states/s. Times on the 2-core development machine (loaded by other jobs):
#   pegsolitaire full forward BFS: 187,636,299 positions, 286 s (655k positions/s)
# The others take minutes to tens of minutes there (pancake n=12 and the 239.5M-state sliding-
# tile boards are meant for a many-core machine).
# Usage: scripts/puzzles.sh [FILTER]   e.g. scripts/puzzles.sh table_3_n12
set -euo pipefail
cd "$(dirname "$0")/.."
filter="${1:-}"
for t in puzzle_pegsolitaire puzzle_foreandaft puzzle_topspin puzzle_pancake puzzle_slidingtile; do
  cargo test --release --test "$t" -- --ignored --nocapture ${filter:+"$filter"}
done
