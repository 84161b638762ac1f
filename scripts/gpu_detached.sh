#!/usr/bin/env bash
# On the GPU machine, from the repository root: any of these scripts run
# longer than one device call (GPU.md, "Long runs"), in its own process
# session, with its OUT in a folder that outlives the call; later calls on
# the same warm machine poll it.
#   bash scripts/gpu_detached.sh start NAME COMMAND...  # then polls up to POLL s
#   bash scripts/gpu_detached.sh poll NAME              # waits up to POLL s (default 540)
# COMMAND runs with OUT=/tmp/detached/NAME; each call copies that folder and
# the log to this call's $OUT and prints the log's tail, and "still running"
# or the command's exit status.
set -uo pipefail
what=${1:?start or poll}
name=${2:?a name}
dir=/tmp/detached/$name
if [ "$what" = start ]; then
  shift 2
  rm -rf "$dir"; mkdir -p "$dir/out"
  OUT="$dir/out" setsid nohup bash -c '"$@"; echo $? > "'"$dir"'/rc"' _ "$@" \
    > "$dir/log" 2>&1 < /dev/null &
fi
deadline=$(( $(date +%s) + ${POLL:-540} ))
while [ ! -f "$dir/rc" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 5; done
mkdir -p "${OUT:-/tmp}/$name"
cp -r "$dir/out/." "$dir/log" "${OUT:-/tmp}/$name/" 2>/dev/null
tail -n "${TAIL:-40}" "$dir/log"
if [ -f "$dir/rc" ]; then
  echo "== $name ended: exit status $(cat "$dir/rc")"
  exit "$(cat "$dir/rc")"
fi
echo "== $name still running"
