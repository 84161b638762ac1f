#!/usr/bin/env bash
# Samples a running build with perf for a while, on a machine without perf
# installed: the development machine's perf and its libraries are carried
# in PERF_KIT (perf, ld-linux-x86-64.so.2, lib/), made with
#   mkdir -p .device/perfkit/lib && cp /usr/bin/perf /lib64/ld-linux-x86-64.so.2 .device/perfkit/ &&
#   for l in $(ldd /usr/bin/perf | awk '{print $3}' | grep /); do cp -L $l .device/perfkit/lib/; done
# and the binary keeps its symbols (strip --strip-debug, not strip).
#   bash scripts/gpu_perf_attach.sh PATTERN DELAY SECONDS
# waits for a tbforge process whose command line matches PATTERN, DELAY seconds
# more, then samples it SECONDS seconds (call graphs by DWARF unwinding, 49
# samples a second a thread) and writes to $OUT/perf-report.txt where its
# threads spent their time: by thread name, then each kind's functions.
set -uo pipefail
pattern=${1:?a pattern of the command line}
delay=${2:-0}
seconds=${3:-30}
KIT=${PERF_KIT:-.device/perfkit}
OUT=${OUT:-/tmp/perf-attach}
mkdir -p "$OUT"
perf() { "$KIT/ld-linux-x86-64.so.2" --library-path "$KIT/lib" "$KIT/perf" "$@"; }
if ! perf stat -e task-clock -o "$OUT/perf-check.txt" true 2> "$OUT/perf-check.err"; then
  echo "perf does not run here: $(tail -1 "$OUT/perf-check.err")"
  exit 1
fi
rm -f "$OUT/perf-check.txt" "$OUT/perf-check.err"
pid=""
# Not found within WAIT seconds (default 120): the build ended or failed,
# or its binary is not named tbforge.
for _ in $(seq 1 "${WAIT:-120}"); do
  # The newest tbforge process (not this script, whose arguments match too).
  pid=$(pgrep -n -x tbforge -f -- "$pattern" 2>/dev/null || true)
  [ -z "$pid" ] && for p in $(pgrep -f -- "$pattern"); do
    [ "$(cat /proc/$p/comm 2>/dev/null)" = tbforge ] && pid=$p
  done
  [ -n "$pid" ] && break
  sleep 1
done
[ -n "$pid" ] || { echo "no process named tbforge matches $pattern (a binary under another name is not found)"; exit 1; }
sleep "$delay"
echo "sampling pid $pid for $seconds s"
# Beside perf (which sees threads on a CPU only): ten times a second, each
# thread's state and, off the CPU, the kernel function it sleeps in: R runs,
# D waits for the disk, S sleeps (futex: a lock, a channel or rayon).
python3 - "$pid" "$seconds" > "$OUT/states.txt" <<'PY' &
import collections, glob, sys, time
pid, seconds = sys.argv[1], float(sys.argv[2])
counts, samples, end = collections.Counter(), 0, time.time() + seconds
while time.time() < end:
    for t in glob.glob(f"/proc/{pid}/task/*"):
        try:
            comm = open(f"{t}/comm").read().strip()
            state = open(f"{t}/stat").read().rsplit(")", 1)[1].split()[0]
            wchan = "" if state == "R" else open(f"{t}/wchan").read().strip()
        except OSError:
            continue
        counts[(comm, state, wchan)] += 1
    samples += 1
    time.sleep(0.1)
print(f"{samples} samples: threads in each state on average")
for (comm, state, wchan), n in sorted(counts.items(), key=lambda kv: (kv[0][0], -kv[1])):
    if n / samples >= 0.01:
        print(f"{comm:16} {state} {wchan:28} {n / samples:6.2f}")
PY
states=$!
perf record -F 49 --call-graph dwarf,4096 -p "$pid" -o "$OUT/perf.data" -- sleep "$seconds" \
  > "$OUT/record.log" 2>&1 || { echo "perf record failed: $(tail -2 "$OUT/record.log")"; exit 1; }
wait "$states"
report() { perf report -i "$OUT/perf.data" --stdio "$@" 2>/dev/null; }
# One file (the device machine sends back few): the threads by name (the
# pipeline names its own: tbforge-pool, -flush, -chunks, -runread, -read;
# tbforge is the main thread), then each kind's own work, then what the
# main thread's time went to with callees.
{
  echo "== samples by thread name ($seconds s at 49 a second: samples / $((seconds * 49)) = threads of that name busy)"
  report --no-children --sort comm -g none --show-nr-samples | grep '%' | head -30
  for comm in tbforge tbforge-pool tbforge-flush tbforge-chunks tbforge-runread tbforge-read; do
    echo "== $comm: own work by function"
    report --comms "$comm" --no-children --sort symbol -g none --show-nr-samples | grep '%' | head -30 | cut -c1-180
  done
  echo "== tbforge (main thread): with callees"
  report --comms tbforge --children --sort symbol -g none | grep '%' | head -60 | cut -c1-180
  echo "== tbforge-pool: with callees"
  report --comms tbforge-pool --children --sort symbol -g none | grep '%' | head -80 | cut -c1-180
  echo "== every thread: own work by function"
  report --no-children --sort symbol -g none | grep '%' | head -60 | cut -c1-180
  echo "== thread states"
  cat "$OUT/states.txt"
} > "$OUT/perf-report.txt"
rm -f "$OUT/perf.data" "$OUT/record.log" "$OUT/states.txt"
echo "perf reports in $OUT: $(ls "$OUT" | tr '\n' ' ')"
