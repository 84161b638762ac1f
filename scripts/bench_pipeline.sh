#!/usr/bin/env bash
# External-memory pipeline benchmark, in one run on one machine:
#   1. the scratch disk's sequential write and read bandwidth (dd, 1 GiB, fdatasync / direct I/O);
#   2. a build forced through the pipeline (--mem-limit far below the data), from its build log:
#      scratch bytes read + written per second of the build;
#   3. the ratio of 2 to 1, and the same build in memory to check the bytes are identical.
# Usage: scripts/bench_pipeline.sh [SCRATCH_DIR]   (env: TBFORGE, GAME, PARAMS, MEM)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${TBFORGE:-target/release/tbforge}
dir=${1:-/tmp/tbforge-pipeline-bench}
game=${GAME:-connect4}
params=${PARAMS-"width=5 height=4"}
mem=${MEM:-4M}
[ -x "$bin" ] || cargo build --release --quiet
rm -rf "$dir" && mkdir -p "$dir"
pargs=(); for p in $params; do pargs+=(--param "$p"); done

echo "== disk bandwidth ($dir)"
wbps=$(dd if=/dev/zero of="$dir/dd.bin" bs=16M count=64 conv=fdatasync 2>&1 | awk '/copied/ {print $(NF-1)" "$NF}')
rbps=$(dd if="$dir/dd.bin" of=/dev/null bs=16M iflag=direct 2>&1 | awk '/copied/ {print $(NF-1)" "$NF}')
rm -f "$dir/dd.bin"
to_bytes() { awk -v v="$1" -v u="$2" 'BEGIN { m = (u ~ /^G/) ? 1e9 : (u ~ /^M/) ? 1e6 : (u ~ /^k/) ? 1e3 : 1; printf "%.0f", v * m }'; }
w=$(to_bytes $wbps); r=$(to_bytes $rbps)
echo "sequential write $wbps, read $rbps"

echo "== build $game ($params) through the pipeline, --mem-limit $mem, two scratch dirs"
"$bin" build "$game" "${pargs[@]}" --backend cpu --out "$dir/external" --mem-limit "$mem" \
  --disk "$dir/diskA" --disk "$dir/diskB" --json > "$dir/external.json"
echo "== the same build in memory"
"$bin" build "$game" "${pargs[@]}" --backend cpu --out "$dir/memory" --json > "$dir/memory.json"
for f in "$dir"/memory/*; do
  name=$(basename "$f"); [ "$name" = build-log.json ] && continue
  cmp -s "$f" "$dir/external/$name" || { echo "MISMATCH: $name differs between pipeline and in-memory builds"; exit 1; }
done
echo "pipeline and in-memory builds: identical bytes"

python3 - "$dir/external/build-log.json" "$dir/memory/build-log.json" "$w" "$r" "$mem" <<'PY'
import json, sys
ext, mem = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
w, r, limit = float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
io = ext["scratch_bytes_read"] + ext["scratch_bytes_written"]
rate = io / ext["seconds"]
disk = (w + r) / 2
print()
print(f"| {'measure':44} | {'value':>16} |")
print(f"|{'-'*46}|{'-'*18}|")
rows = [
    ("positions", f"{ext['positions']:,}"),
    ("memory limit", limit),
    ("peak RSS, pipeline build (MB)", f"{(ext['peak_rss'] or 0)/1e6:.1f}"),
    ("peak RSS, in-memory build (MB)", f"{(mem['peak_rss'] or 0)/1e6:.1f}"),
    ("pipeline build seconds", f"{ext['seconds']:.2f}"),
    ("in-memory build seconds", f"{mem['seconds']:.2f}"),
    ("scratch bytes read + written (MB)", f"{io/1e6:.1f}"),
    ("pipeline scratch throughput (MB/s)", f"{rate/1e6:.1f}"),
    ("disk sequential write / read (MB/s)", f"{w/1e6:.0f} / {r/1e6:.0f}"),
    ("pipeline / disk bandwidth", f"{rate/disk:.1%}"),
    ("positions/s through the pipeline", f"{ext['positions']/ext['seconds']:.3e}"),
]
for k, v in rows:
    print(f"| {k:44} | {v:>16} |")
PY
