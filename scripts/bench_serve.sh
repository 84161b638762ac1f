#!/usr/bin/env bash
# Requests per second and latency of `tbforge serve` on loopback: builds
# small tablebases (the default set's sizes, checkers with 3 pieces), then
# runs `tbforge bench serve` with the server's answer cache (the explorer's
# normal state for positions asked before) and without it (every request
# probes the position and each successor through the block cache), over 32
# and over 8 keep-alive connections. Server and load generator share this
# machine's cores, so the figures are a floor for a server on its own.
#
#   bash scripts/bench_serve.sh              # dev profile (optimised; what CI builds)
#   PROFILE=release bash scripts/bench_serve.sh
#   REQUESTS=N                               # per tablebase and run (default 20000)
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${PROFILE:-debug}
case "$profile" in
  debug) flag=() ;;
  release) flag=(--release) ;;
  *) echo "bench_serve.sh: PROFILE must be debug or release, not '$profile'" >&2; exit 2 ;;
esac
requests=${REQUESTS:-20000}
cargo build -q "${flag[@]}" --bin tbforge
tbforge=target/$profile/tbforge
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

dirs=()
for b in "tictactoe" "connect4 --param width=5 --param height=4" "morris --param max=3" "checkers --param pieces=3"; do
  read -r -a args <<<"$b"
  "$tbforge" build "${args[@]}" --backend cpu --out "$work/${args[0]}" >/dev/null
  dirs+=("$work/${args[0]}")
done

echo "# $(nproc) cores, $(uname -m); $requests requests per tablebase and run"
for answers in 4096 0; do
  for conns in 32 8; do
    echo
    echo "## answer cache $answers, $conns connections"
    "$tbforge" bench serve "${dirs[@]}" --requests "$requests" --connections "$conns" --answers "$answers"
  done
done
