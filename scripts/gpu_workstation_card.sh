#!/usr/bin/env bash
# On the GPU machine, from the repository root: Morris as a workstation card
# would build it (the streamed-pipeline issue's goal: max=8 with
# `--gpu-mem-limit 24G --mem-limit 32G` completes, its time beside the
# in-memory GPU build's). Builds MAX (default 8) in memory on the whole
# device, then under GPU_LIMIT / HOST_LIMIT (default 24G / 32G), compares
# every file and prints both times, the build mode and the largest working
# set the kernels asked for.
#   bash scripts/gpu_workstation_card.sh
. "$(dirname "$0")/gpu_env.sh" tbforge-workstation
max=${MAX:-8}
gpu_limit=${GPU_LIMIT:-24G}
host_limit=${HOST_LIMIT:-32G}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
build() {
  local name=$1; shift
  rm -rf "$WORK/$name"
  timeout "${BUILD_TIMEOUT:-300}" "$BIN" build morris --param max="$max" --backend cuda --out "$WORK/$name" "$@" \
    > "$OUT/$name.txt" 2>&1 || { echo "   $name: failed or timed out"; tail -2 "$OUT/$name.txt"; status=1; return; }
  python3 - "$WORK/$name/build-log.json" "$name" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
ws = log.get("largest_working_set")
print("   | %s | %.2f s | %s | %s |" % (sys.argv[2], log["seconds"], log["mode"],
      "%.1f GB" % (ws / 1e9) if ws else "-"))
PY
}
echo "== Morris max=$max on the GPU: the whole device, then --gpu-mem-limit $gpu_limit --mem-limit $host_limit"
echo "   | build | seconds | mode | largest working set |"
echo "   | --- | ---: | --- | --- |"
build whole
build card --gpu-mem-limit "$gpu_limit" --mem-limit "$host_limit"
if [ -f "$WORK/card/manifest.json" ] && diff -r -x build-log.json "$WORK/whole" "$WORK/card" > /dev/null; then
  echo "   files identical ($(ls "$WORK/card" | wc -l) files)"
else
  echo "   files DIFFERENT or missing"; status=1
fi
exit $status
