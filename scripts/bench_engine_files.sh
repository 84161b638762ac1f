#!/usr/bin/env bash
# Engine files (`tbforge export DIR --engine OUT`) against the full files and
# against `zstd -19` of the raw value array (one byte per index, every
# partition compressed as one stream at level 19 by `tbforge bench zstd`,
# summed): bytes and bits per index of each, and the engine files' ratio to
# zstd-19, with distances (`--distance`) and WDL (the default). Run from the repository root:
#   cargo build && bash scripts/bench_engine_files.sh
#   bash scripts/bench_engine_files.sh morris:max=6 connect4:width=5,height=5 checkers:pieces=5
# Arguments: GAME:KEY=VALUE,... specs (default: the ones below, each built in
# well under a minute on 2 cores). Settings: BIN (default
# target/debug/tbforge), WORK (default /tmp/tbforge-engine-bench; a built
# tablebase there is reused), BACKEND (default cpu).
# Published numbers: README.md "Engine files".
set -euo pipefail
BIN=${BIN:-target/debug/tbforge}
WORK=${WORK:-/tmp/tbforge-engine-bench}
BACKEND=${BACKEND:-cpu}
specs=("$@")
[ ${#specs[@]} -eq 0 ] && specs=(morris:max=4 morris:max=5 connect4:width=5,height=4 connect4:width=5,height=5 checkers:pieces=4)
mkdir -p "$WORK"
printf '%-26s %12s %12s %9s %12s %9s %7s %12s %9s %7s\n' tablebase indices "zstd-19" bits "+distance" bits ratio "engine" bits ratio
for spec in "${specs[@]}"; do
  game=${spec%%:*}
  params=()
  name=$game
  if [ "$spec" != "$game" ]; then
    IFS=, read -ra kv <<<"${spec#*:}"
    for p in "${kv[@]}"; do params+=(--param "$p"); done
    name="$game-${spec#*:}"
  fi
  full="$WORK/$name"
  if [ ! -f "$full/manifest.json" ]; then
    "$BIN" build "$game" "${params[@]}" --backend "$BACKEND" --out "$full" >/dev/null
  fi
  for v in engine wdl; do
    rm -rf "$full.$v"
    extra=()
    [ $v = engine ] && extra=(--distance)
    "$BIN" export "$full" --engine "$full.$v" "${extra[@]}" --json >"$full.$v.json"
  done
  zsum=0
  for part in $(python3 -c 'import json,sys; print(" ".join(f["partition_name"] for f in json.load(open(sys.argv[1]))["files"]))' "$full/manifest.json"); do
    b=$("$BIN" bench zstd "$full" --partition "$part" --level 19 --json |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["stream_bytes"])')
    zsum=$((zsum + b))
  done
  python3 - "$name" "$zsum" "$full.engine.json" "$full.wdl.json" <<'PY'
import json, sys
name, z = sys.argv[1], int(sys.argv[2])
e, w = (json.load(open(p)) for p in sys.argv[3:5])
n = e["index_size"]
bits = lambda b: 8 * b / n
print(f'{name:<26} {n:12d} {z:12d} {bits(z):9.4f} {e["bytes"]:12d} {bits(e["bytes"]):9.4f} {e["bytes"]/z:7.3f} '
      f'{w["bytes"]:12d} {bits(w["bytes"]):9.4f} {w["bytes"]/z:7.3f}')
PY
done
echo "(bits: per index, legal or not; ratio: engine bytes / zstd-19 bytes; goal <= 0.5."
echo " Syzygy WDL about 0.18 bits per position, Kingsrow about 0.13.)"
