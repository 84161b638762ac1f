#!/usr/bin/env bash
# On the GPU machine, from the repository root: whole builds through the CLI,
# CPU backend vs CUDA backend, must give byte-identical tablebase files and
# manifests; then verify --deep; then a table of build times.
#   cargo build --release
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/gpu_build.sh .device/
# Arguments: morris max values to compare (default "4"; "none" for none).
# C4_BOARDS: Connect Four boards WIDTHxHEIGHT (default "5x4 4x6 5x5"), solved
# on the GPU through the same --backend auto. Logs under $OUT.
. "$(dirname "$0")/gpu_env.sh" tbforge-gpubuild
rows=()
compare() { # name dir_a dir_b
  local bad=0
  for f in "$2"/*; do
    n=$(basename "$f"); [ "$n" = build-log.json ] && continue
    cmp -s "$f" "$3/$n" || { echo "MISMATCH $1: $n"; bad=1; }
  done
  [ "$(ls "$2" | wc -l)" = "$(ls "$3" | wc -l)" ] || { echo "MISMATCH $1: file sets differ"; bad=1; }
  return $bad
}
secs() { python3 -c "import json,sys; print('%.2f' % json.load(open(sys.argv[1]))['seconds'])" "$1/build-log.json"; }
c4=$(for b in ${C4_BOARDS:-5x4 4x6 5x5}; do [ "$b" = none ] || echo "connect4:width=${b%x*}:height=${b#*x}"; done)
morris=$(for m in ${@:-4}; do [ "$m" = none ] || echo "morris:max=$m"; done)
# Games without kernels go through --backend auto too: it must fall back to the CPU with the same bytes.
for spec in "tictactoe" "nim heaps=1,3,5,7" "foreandaft" "pancake n=8" "topspin n=9 k=4" "slidingtile rows=3 cols=3" $c4 $morris; do
  spec=${spec//:/ }
  set -- $spec; game=$1; shift
  pargs=(); for p in "$@"; do pargs+=(--param "$p"); done
  tag=$(echo "$spec" | tr ' =,' '___')
  "$BIN" build "$game" "${pargs[@]}" --backend cpu --out "$WORK/cpu-$tag" --json >"$OUT/cpu-$tag.json" 2>"$OUT/cpu-$tag.err" || status=1
  "$BIN" build "$game" "${pargs[@]}" --backend auto --out "$WORK/gpu-$tag" --json >"$OUT/gpu-$tag.json" 2>"$OUT/gpu-$tag.err" || status=1
  if compare "$tag" "$WORK/cpu-$tag" "$WORK/gpu-$tag"; then same=identical; else same=DIFFERENT; status=1; fi
  "$BIN" verify "$WORK/gpu-$tag" --deep >"$OUT/verify-$tag.txt" 2>&1 && ver=ok || { ver=FAILED; status=1; }
  acc=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['accelerated_partitions'])" "$WORK/gpu-$tag/build-log.json" 2>/dev/null)
  rows+=("$(printf '| %-32s | %9s | %9s | %5s | %-9s | %-6s |' "$spec" "$(secs "$WORK/cpu-$tag")" "$(secs "$WORK/gpu-$tag")" "$acc" "$same" "$ver")")
done
echo
printf '| %-32s | %9s | %9s | %5s | %-9s | %-6s |\n' "build" "CPU s" "auto s" "GPU p" "bytes" "verify"
for r in "${rows[@]}"; do echo "$r"; done
echo "gpu_build exit status $status"
exit $status
