#!/usr/bin/env bash
# The streamed GPU pipeline on the GPU machine: checks and measures in one run.
# 1. The machine's rates: the scratch disk's sequential write and read
#    (dd, direct I/O, DISK_GB GiB) and pinned copies each way (`bench pcie`).
# 2. For Connect Four 5x5 and Morris max=MORRIS_MAX (default 6): the CPU
#    build in memory (the reference bytes), the GPU build in memory (its
#    largest partition's device working set W), then streamed builds with
#    --gpu-mem-limit W/8 and W/64 over 1 and 3 scratch directories, and the
#    CPU's external build with the same --mem-limit: every directory must be
#    byte-identical to the reference (build-log.json aside), and each
#    streamed build's peak RSS within its --mem-limit.
# 3. A streamed build killed (SIGKILL) at random moments and resumed until it
#    finishes: byte-identical too.
# 4. Per streamed build, the timeline summed from build-log.json: scratch
#    bytes, copies and kernels on the device, waits, what reached the
#    storage below the page cache (`storage_io`); the wall time against
#    the time the disk needs for the scratch bytes at its sequential rates,
#    and kernel busy time against wall. Then its passes by partition and by
#    groups of passes (scripts/pass_journal.py), also for a build cut short.
# GAMES (default "connect4 morris"; also "checkers", CHECKERS_PIECES default 5)
# picks the games; REFERENCE=gpu makes the in-memory GPU build the reference
# bytes instead of the CPU's (checkers through 5 pieces takes 204 s on 16
# cores; the GPU build's bytes equal the CPU's in scripts/gpu_checkers.sh); BUILD_TIMEOUT (default 240 s) caps each build; a build that runs out is
# reported, not compared. KILLS (default 4, 0: none) caps the kills of part 3, made under --gpu-mem-limit W/KILL_AT (default 64: checkers through 4 pieces has W = 2.2 MB, and W/64 is below the stager's least buffers, a one-line refusal). COMBOS (default "8:1 8:3 64:1 64:3") picks the streamed builds (W/8 over 1
# disk, ...); NO_CPU_EXTERNAL=1 leaves out the CPU's external build.
# CARD_ALONE (default 8, 0: none) adds a build under --gpu-mem-limit
# W/CARD_ALONE without --mem-limit, whose small partitions are solved in
# memory on the device beside the streamed ones: byte-identical too.
# CGROUP_MB (default 0: none) runs the streamed builds in a memory cgroup of
# that many MiB, process and page cache together (scripts/cgroup.sh), so that
# the page cache cannot hold their scratch files and the disk carries them, as
# the disk-time goal supposes (a host with RAM to spare keeps them cached, and
# then the host's steps, not the disk, bound the pipeline); `auto`: the
# builds' --mem-limit plus 256 MiB. The line before each game's table says
# which cgroup the builds ran in, or that none could be made.
# The binary is built elsewhere (no Rust on the GPU machine):
#   cargo build --release --features cuda
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/*.sh scripts/*.py .device/
. "$(dirname "$0")/gpu_env.sh" tbforge-gpu-pipeline
. "$(dirname "$0")/cgroup.sh"
MORRIS_MAX=${MORRIS_MAX:-6}
BUILD_TIMEOUT=${BUILD_TIMEOUT:-240}
KILLS=${KILLS:-4}
in_cgroup=()
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
nvidia-smi --query-gpu=name,memory.total,memory.free --format=csv,noheader
echo "== $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, scratch on $(df -h "$WORK" | awk 'NR==2{print $1, $2}')"

# 1. Rates.
disk_rates
PCIE=$("$BIN" bench pcie --size-mb 512 --json)
echo "$PCIE"
python3 - "$DISK_W" "$DISK_R" "$PCIE" <<'EOF' | tee -a "$SUMMARY"
import json, sys
w, r, p = float(sys.argv[1]), float(sys.argv[2]), json.loads(sys.argv[3])
print("| rate | GB/s |\n| --- | ---: |")
print(f"| disk sequential write | {w/1e9:.2f} |\n| disk sequential read | {r/1e9:.2f} |")
print(f"| pinned copy to device | {p['h2d_bytes_per_second']/1e9:.1f} |\n| pinned copy back | {p['d2h_bytes_per_second']/1e9:.1f} |")
EOF

# Builds into DIR with the rest as arguments, capped; prints its seconds (or "timeout").
build() {
  local dir=$1; shift
  rm -rf "$dir" "$dir".d*
  local t0=$(date +%s.%N)
  "${in_cgroup[@]}" timeout "$BUILD_TIMEOUT" "$BIN" build "$@" --out "$dir" --json > "$dir.json" 2> "$dir.err"
  local rc=$?
  if [ $rc -eq 124 ]; then echo timeout; return; fi
  if [ $rc -ne 0 ]; then echo "failed($rc): $(tail -1 "$dir.err")"; status=1; return; fi
  python3 -c "print(round($(date +%s.%N) - $t0, 2))"
}

# Whether a build's peak RSS (build-log.json) stayed within --mem-limit
# LIMIT: prints "peak RSS N MiB within the limit ...", or "OVER" (which
# fails the bench: the limit bounds the whole process).
within_limit() {
  python3 - "$1/build-log.json" "$2" <<'EOF'
import json, sys
peak, limit = json.load(open(sys.argv[1])).get("peak_rss") or 0, int(sys.argv[2])
print(f"peak RSS {peak / 2**20:.0f} MiB {'within' if peak <= limit else 'OVER'} the limit of {limit / 2**20:.0f} MiB")
EOF
}

# The timeline of a build's log as one table row.
timeline() {
  python3 - "$1" "$2" "$DISK_W" "$DISK_R" "$3" <<'EOF'
import json, sys
log = json.load(open(f"{sys.argv[1]}/build-log.json"))
label, w, r, wall = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
passes = [p for part in log["partitions"] for p in part.get("pipeline_passes", [])]
s = lambda k: sum(p[k] for p in passes)
d = lambda k: sum(p["device"][k] for p in passes)
wt = lambda k: sum(p["waits"].get(k, 0) for p in passes)
req = s("requests")
rb = sum(p["requests"] * (p["scratch_bytes_per_request"] or 0) for p in passes)
rd, wr = log["scratch_bytes_read"], log["scratch_bytes_written"]
disk = rd / r + wr / w
# The same traffic with runs uncompressed (a 16-byte request and a 16-byte
# answer per request, each written once and read once): the effective rate
# against the disk's raw sequential rate is raw disk time / pipeline time.
raw_extra = max(32 * req - rb, 0)
raw_disk = (rd + raw_extra) / r + (wr + raw_extra) / w
pipe = log["pipeline_seconds"]
# What reached the storage below the page cache (/proc/self/io, the whole
# build's, tablebase files included): reads of 0 say the page cache held
# the scratch, and writes above the scratch's say its small writes dirtied
# whole pages.
sio = log.get("storage_io") or {}
# Each expander with its passes (", answered on the device": the device
# looked a pass's successors up itself).
exp = [f"{e} ({sum(p['expander'] == e for p in passes)})" for e in sorted({p["expander"] for p in passes})]
cand = sum(p.get("candidates") or 0 for p in passes)
cand_passes = sum(1 for p in passes if p.get("candidates") is not None)
print(f"| {label} | {wall:.1f} | {pipe:.1f} | {len(passes)} | {rd/1e9:.2f} | {wr/1e9:.2f} | {req/1e6:.1f} | "
      f"{(rb/req if req else 0):.1f} | {d('h2d_bytes')/1e9:.2f} / {d('h2d_seconds'):.2f} | "
      f"{d('d2h_bytes')/1e9:.2f} / {d('d2h_seconds'):.2f} | {d('kernel_seconds'):.2f} | "
      f"{s('jobs')} / {sum(p['device'].get('host_stage_seconds', 0) for p in passes):.2f} | "
      f"{wt('for_chunk_reads'):.1f} / {wt('for_device'):.1f} / {wt('for_flushers'):.1f} / {wt('for_run_reads'):.1f} / {wt('for_write_back'):.1f} / {wt('for_marking'):.1f} | "
      f"{sio.get('read_bytes', 0)/1e9:.2f} / {sio.get('write_bytes', 0)/1e9:.2f} | "
      f"{disk:.1f} | {pipe/disk if disk else 0:.2f} | {raw_disk/max(pipe,1e-9):.2f} | {100*d('kernel_seconds')/max(pipe,1e-9):.1f}% | "
      f"{sum(part['index_size'] * len(part.get('pipeline_passes', [])) for part in log['partitions'])/max(pipe,1e-9)/1e6:.0f} | "
      f"{cand_passes} / {cand/1e6:.1f} / {s('candidate_seconds'):.1f} | {(log.get('peak_rss') or 0)/2**20:.0f} | {', '.join(exp)} |")
EOF
}

HEADER="| build | wall s | pipeline s | passes | read GB | written GB | requests M | scratch B/request (32 raw) | h2d GB / s | d2h GB / s | kernel s | jobs / host staging s | waits: reads / device / flushers / runs / write-back / marking s | storage read / written GB | disk time s | pipeline / disk | effective rate / disk rate | kernel busy | M index-passes/s | passes over candidates / candidates M / marking s | peak RSS MiB | expander |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |"

one_game() { # GAME ARGS...: every build gets both
  local name=$1
  local base="$WORK/$name"
  echo "== $name ($*)" | tee -a "$SUMMARY"
  local ref="$base-cpu"
  if [ "${REFERENCE:-cpu}" = gpu ]; then
    ref="$base-gpu"
    local t_gpu=$(build "$base-gpu" "$@" --backend cuda)
    echo "in memory: GPU $t_gpu s, the reference (REFERENCE=gpu: no CPU build)" | tee -a "$SUMMARY"
  else
    local t_cpu=$(build "$base-cpu" "$@" --backend cpu)
    local t_gpu=$(build "$base-gpu" "$@" --backend cuda)
    echo "in memory: CPU $t_cpu s, GPU $t_gpu s; GPU $(same "$base-cpu" "$base-gpu")" | tee -a "$SUMMARY"
  fi
  local W=$(python3 -c "import json;print(json.load(open('$base-gpu/build-log.json')).get('largest_working_set',0))")
  local L=$(python3 -c "import json;print(max(p['index_size'] for p in json.load(open('$ref/build-log.json'))['partitions']))")
  local MEM=$(streamed_mem_limit "$ref" "$base-gpu")
  echo "largest device working set $W bytes, largest partition $L indices; --mem-limit $MEM for the external builds" | tee -a "$SUMMARY"
  local cg_mb=${CGROUP_MB:-0}
  [ "$cg_mb" = auto ] && cg_mb=$(( (MEM >> 20) + 256 ))
  make_memory_cgroup "$cg_mb"
  if [ -n "$cg" ]; then
    echo "streamed builds in memory cgroup $cg: $cg_mb MiB (process + page cache)" | tee -a "$SUMMARY"
  else
    echo "streamed builds without a memory cgroup (CGROUP_MB=0 or not permitted): the page cache may hold their scratch" | tee -a "$SUMMARY"
  fi
  local rows="$HEADER"
  for combo in ${COMBOS:-8:1 8:3 64:1 64:3}; do
    local f=${combo%:*} n=${combo#*:}
    {
      local dir="$base-s$f-$n"
      local disks=""
      for i in $(seq 1 $n); do disks="$disks --disk $dir.d$i"; done
      in_cgroup=(run_in_cgroup)
      local t=$(build "$dir" "$@" --backend cuda --gpu-mem-limit $((W / f)) --mem-limit $MEM $disks)
      in_cgroup=()
      # A build cut short by BUILD_TIMEOUT has fewer files: reported, not compared.
      local verdict="not compared"
      [[ $t =~ ^[0-9.]+$ ]] && verdict=$(same "$ref" "$dir")
      [[ $t =~ ^[0-9.]+$ ]] && verdict="$verdict, $(within_limit "$dir" "$MEM")"
      [[ $verdict == *OVER* ]] && status=1
      echo "streamed, --gpu-mem-limit W/$f, $n disk(s): $t s, $verdict" | tee -a "$SUMMARY"
      [[ $t =~ ^[0-9.]+$ ]] && rows="$rows
$(timeline "$dir" "GPU W/$f $n disk(s)" "$t")"
    }
  done
  if [ -z "${NO_CPU_EXTERNAL:-}" ]; then
    local t=$(build "$base-ext" "$@" --backend cpu --mem-limit $MEM)
    local verdict="not compared"
    [[ $t =~ ^[0-9.]+$ ]] && verdict=$(same "$ref" "$base-ext")
    echo "CPU external, --mem-limit $MEM: $t s, $verdict" | tee -a "$SUMMARY"
    [[ $t =~ ^[0-9.]+$ ]] && rows="$rows
$(timeline "$base-ext" "CPU external" "$t")"
  fi
  # The card limit alone (no --mem-limit): partitions whose kernel solve
  # fits W/CARD_ALONE are solved in memory on the device, the others
  # streamed, in one build (kernel code loaded on the way must not count
  # against the limit).
  if [ "${CARD_ALONE:-8}" != 0 ]; then
    local dir="$base-card"
    local t=$(build "$dir" "$@" --backend cuda --gpu-mem-limit $((W / ${CARD_ALONE:-8})) --disk "$dir.d1")
    local verdict="not compared"
    [[ $t =~ ^[0-9.]+$ ]] && verdict=$(same "$ref" "$dir")
    echo "--gpu-mem-limit W/${CARD_ALONE:-8} alone (in-memory and streamed partitions): $t s, $verdict" | tee -a "$SUMMARY"
    [[ $t =~ ^[0-9.]+$ ]] && rows="$rows
$(timeline "$dir" "GPU W/${CARD_ALONE:-8}, no --mem-limit" "$t")"
  fi
  echo "$rows" | tee -a "$SUMMARY"
  # Where each streamed build's time went (seconds summed over its threads).
  for dir in "$base"-s*-? "$base-ext"; do
    [ -f "$dir/build-log.json" ] && python3 -c "import json,sys;l=json.load(open(sys.argv[1]));print(sys.argv[1].rsplit('/',1)[-1], 'profile:', {k: round(v, 1) for k, v in l.get('pipeline_profile', {}).items() if isinstance(v, (int, float))})" "$dir/build-log.json" | tee -a "$SUMMARY"
    # Its passes by partition, and its longest partition's by groups of
    # passes (from the pass journal where BUILD_TIMEOUT cut the build).
    if [ -f "$dir/build-log.json" ] || [ -f "$dir/.tbforge-passes.jsonl" ]; then
      echo "${dir##*/}: passes" | tee -a "$SUMMARY"
      python3 "$(dirname "$0")/pass_journal.py" "$dir" 10 "$DISK_W" "$DISK_R" | tee -a "$SUMMARY"
    fi
  done
  [ "$KILLS" -gt 0 ] || return 0
  # Killed and resumed: W/KILL_AT over 3 disks, SIGKILL at random moments.
  local kill_at=${KILL_AT:-64}
  local dir="$base-kill" disks="--disk $base-kill.d1 --disk $base-kill.d2 --disk $base-kill.d3"
  rm -rf "$dir" "$dir".d*
  # The uninterrupted build's seconds: the kills fall within them.
  local kill_span=$(grep "W/$kill_at, 3 disk" "$SUMMARY" | tail -1 | sed 's/.*disk(s): \([0-9.]*\) s.*/\1/')
  [[ $kill_span =~ ^[0-9.]+$ ]] || kill_span=20
  local kills=0 resume=""
  for k in $(seq 1 "$KILLS"); do
    local delay=$(python3 -c "import random;print(round(random.uniform(0.1, 0.8)*$kill_span, 2))")
    RUST_BACKTRACE=1 "$BIN" build "$@" --backend cuda --gpu-mem-limit $((W / kill_at)) --mem-limit $MEM $disks --out "$dir" $resume --checkpoint-every 0 > /dev/null 2>> "$dir.err" &
    local pid=$!
    sleep "$delay"
    if kill -9 $pid 2>/dev/null; then kills=$((kills + 1)); fi
    wait $pid 2>/dev/null
    resume="--resume"
    [ -f "$dir/manifest.json" ] && break
  done
  [ -f "$dir/manifest.json" ] || RUST_BACKTRACE=1 timeout "$BUILD_TIMEOUT" "$BIN" build "$@" --backend cuda --gpu-mem-limit $((W / kill_at)) --mem-limit $MEM $disks --out "$dir" --resume > /dev/null 2>> "$dir.err"
  echo "killed $kills times (SIGKILL) under W/$kill_at and resumed: $(same "$ref" "$dir")" | tee -a "$SUMMARY"
}

for g in ${GAMES:-connect4 morris}; do
  case $g in
    connect4) one_game connect4 --param width=5 --param height=5 ;;
    morris) one_game morris --param max="$MORRIS_MAX" ;;
    checkers) one_game checkers --param pieces="${CHECKERS_PIECES:-5}" ;;
  esac
done
if grep -q DIFFERENT "$SUMMARY"; then status=1; fi
echo "== summary"; cat "$SUMMARY"
exit $status
