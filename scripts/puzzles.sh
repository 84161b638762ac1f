#!/usr/bin/env bash
# The puzzle instances too large for CI (Edelkamp, "BDDs for Minimal Perfect Hashing" Table 0.4 in full, Edelkamp and Sulewski, "Parallel State Space Search on the GPU" Tables 1, 3, 4):
# runs the ignored tests of tests/puzzle_*.rs, which assert the published numbers (or the
# documented corrections) and print sizes, times and states/s.
# Measured on the 2-core development machine while other jobs shared it (load 6-12), debug
# profile (opt-level 3), so read the rates as lower bounds:
#   pegsolitaire, full one-bit BFS by peg layer: 187,636,299 positions, 32 layers, 286 s (655k/s)
#   topspin n=12 k=4, two-bit BFS: 39,916,800 states, depth 12, 383 s (104k/s)
#   pancake n=11, two-bit BFS: 39,916,800 states, depth 13, 138 s (289k/s)
#   slidingtile 3x4 / 4x3, frontier BFS: 239,500,800 states, depth 53, 461 s / 424 s (520k/s, 565k/s)
#   slidingtile 2x6 / 6x2, frontier BFS: 239,500,800 states, depth 80, 260 s / 239 s (0.92M/s, 1.0M/s)
# Not run here: pancake n=12 (479,001,600 states; a many-core machine or about an hour).
# Usage: scripts/puzzles.sh [FILTER]   e.g. scripts/puzzles.sh table_3_n12
set -euo pipefail
cd "$(dirname "$0")/.."
filter="${1:-}"
# The puzzle tests are modules of the one test binary tests/all.rs: the filter picks them.
cargo test --release --test all -- --ignored --nocapture --test-threads 1 \
  "${filter:-puzzle_}"
