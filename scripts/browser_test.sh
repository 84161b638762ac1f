#!/usr/bin/env bash
# The explorer in a real browser: builds a small tablebase of every game whose
# build takes seconds (peg solitaire's does not), serves them with
# `tbforge serve` on loopback, and drives headless Chromium through the page
# (scripts/browser_test.py: clicks a line of moves per game, checks the board
# and the value against the API, reloads the permalink, types a position,
# opens the statistics view). Screenshots go to $SHOTS (default
# target/browser-shots), one per game and one per statistics view.
#
#   bash scripts/browser_test.sh            # dev profile (what CI has built already)
#   PROFILE=release bash scripts/browser_test.sh
#   CHROMIUM=/path/to/chromium              # default: chromium on PATH
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${PROFILE:-debug}
case "$profile" in
  debug) flag=() ;;
  release) flag=(--release) ;;
  *) echo "browser_test.sh: PROFILE must be debug or release, not '$profile'" >&2; exit 2 ;;
esac
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
  echo "browser_test.sh: chromium not found; install it (apt-get install chromium) or set CHROMIUM" >&2
  exit 2
fi
command -v python3 >/dev/null || { echo "browser_test.sh: python3 not found" >&2; exit 2; }
shots=${SHOTS:-target/browser-shots}

cargo build -q "${flag[@]}" --bin tbforge
tbforge=target/$profile/tbforge
work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

builds=(
  "tictactoe"
  "connect4 --param width=5 --param height=4"
  "morris --param max=3"
  "checkers --param pieces=3"
  "nim --param heaps=1,3,5"
  "foreandaft"
  "pancake --param n=6"
  "topspin --param n=6 --param k=3"
  "slidingtile --param rows=2 --param cols=3"
)
dirs=()
for b in "${builds[@]}"; do
  read -r -a args <<<"$b"
  out="$work/${args[0]}"
  "$tbforge" build "${args[@]}" --backend cpu --out "$out" >/dev/null
  dirs+=("$out")
done

"$tbforge" serve "${dirs[@]}" --bind 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.err" &
server=$!
addr=""
for _ in $(seq 100); do
  addr=$(grep -o 'http://[0-9.:]*' "$work/serve.out" 2>/dev/null | head -1 || true)
  [ -n "$addr" ] && break
  kill -0 "$server" 2>/dev/null || { echo "browser_test.sh: tbforge serve exited: $(cat "$work/serve.err")" >&2; exit 1; }
  sleep 0.1
done
[ -n "$addr" ] || { echo "browser_test.sh: tbforge serve printed no address" >&2; exit 1; }

rm -rf "$shots"
timeout 300 python3 scripts/browser_test.py "$addr" "$shots" --chromium "$chromium"
