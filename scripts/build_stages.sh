#!/usr/bin/env bash
# On the GPU machine, from the repository root: one build, then where its time
# went, partition by partition (`tbforge bench stages`: index size, classes,
# positions, passes, fwd s, device s, solve s, count s, write s, bytes).
#   cargo build --release
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/build_stages.sh .device/
# Arguments: what follows `tbforge build`, e.g.
#   scripts/build_stages.sh morris --param max=8 --backend auto --out /tmp/m8
# (without --out the build writes under tablebases/, as `tbforge build` does).
# The build's JSON summary and each directory's stages (text and JSON) go
# under $OUT.
set -uo pipefail
BIN=${BIN:-.device/tbforge}
OUT=${OUT:-/tmp/tbforge-stages}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[ $# -gt 0 ] || { echo "usage: $0 GAME [tbforge build options...]" >&2; exit 2; }
args=("$@")
# The summary names the output directories; --json once only.
json=0; for a in "${args[@]}"; do [ "$a" = --json ] && json=1; done
[ $json = 1 ] || args+=(--json)
echo "$BIN build ${args[*]}"
"$BIN" build "${args[@]}" >"$OUT/build.json" 2>"$OUT/build.err"
status=$?
if [ $status != 0 ]; then
  cat "$OUT/build.err" >&2
  echo "build_stages: the build failed (exit $status)" >&2
  exit $status
fi
dirs=$(python3 -c "import json,sys; [print(b['out']) for b in json.load(open(sys.argv[1]))['builds']]" "$OUT/build.json") || exit 1
n=0
while IFS= read -r dir; do
  [ -n "$dir" ] || continue
  n=$((n + 1))
  "$BIN" bench stages "$dir" --json >"$OUT/stages-$n.json" || status=1
  "$BIN" bench stages "$dir" | tee "$OUT/stages-$n.txt" || status=1
done <<<"$dirs"
echo "build_stages exit status $status (logs under $OUT)"
exit $status
