#!/usr/bin/env bash
# External-memory pipeline benchmark, in one run on one machine:
#   1. the scratch disk's sequential write and read bandwidth (dd, 1 GiB, fdatasync / direct I/O);
#   2. a build forced through the pipeline (--mem-limit far below the data, two scratch dirs), run
#      in a memory cgroup (when this user may make one) so that the page cache cannot hold the
#      scratch files and the disk really carries them, as on a machine whose RAM is far smaller
#      than the data;
#   3. from its build log: the pipeline's scratch bytes read and written, the bytes the kernel
#      really moved to and from storage, and the disk time those bytes need at the sequential
#      rates of step 1 as a fraction of the pipeline's wall time (100% = the disk never idles);
#   4. the same build in memory, to check the bytes are identical.
# Usage: scripts/bench_pipeline.sh [SCRATCH_DIR]
#   env: TBFORGE (binary), GAME, PARAMS, MEM (--mem-limit), CGROUP_MB (memory cgroup limit,
#        0 = none; default 48), OUT (where the table and logs go; default SCRATCH_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${TBFORGE:-target/release/tbforge}
dir=${1:-/tmp/tbforge-pipeline-bench}
game=${GAME:-nim}
params=${PARAMS-"heaps=8,8,8,8,8,8,8"}
mem=${MEM:-16M}
cgroup_mb=${CGROUP_MB:-48}
[ -x "$bin" ] || cargo build --release --quiet
rm -rf "$dir" && mkdir -p "$dir"
pargs=(); for p in $params; do pargs+=(--param "$p"); done

to_bytes() { awk -v v="$1" -v u="$2" 'BEGIN { m = (u ~ /^G/) ? 1e9 : (u ~ /^M/) ? 1e6 : (u ~ /^k/) ? 1e3 : 1; printf "%.0f", v * m }'; }
# A shared or virtual disk's rate drifts from minute to minute: it is measured
# before and after the build, and the faster of the two is the reference (the
# conservative choice: it makes the pipeline's fraction smaller).
measure_disk() { # sets w, r (bytes/s), keeping the larger of any earlier value
  local wbps rbps
  wbps=$(dd if=/dev/zero of="$dir/dd.bin" bs=16M count=64 conv=fdatasync 2>&1 | awk '/copied/ {print $(NF-1)" "$NF}')
  rbps=$(dd if="$dir/dd.bin" of=/dev/null bs=16M iflag=direct 2>&1 | awk '/copied/ {print $(NF-1)" "$NF}')
  rm -f "$dir/dd.bin"
  echo "sequential write $wbps, read $rbps"
  local nw nr; nw=$(to_bytes $wbps); nr=$(to_bytes $rbps)
  w=$(( ${w:-0} > nw ? ${w:-0} : nw )); r=$(( ${r:-0} > nr ? ${r:-0} : nr ))
}
echo "== disk bandwidth ($dir), before the build"
measure_disk

# A memory cgroup for the pipeline build.
. scripts/cgroup.sh
make_memory_cgroup "$cgroup_mb"
if [ -n "$cg" ]; then echo "== memory cgroup $cg: ${cgroup_mb} MiB (process + page cache)"
else echo "== no memory cgroup (not permitted or CGROUP_MB=0): the page cache may absorb scratch I/O"; fi

echo "== build $game ($params) through the pipeline, --mem-limit $mem, two scratch dirs"
run_in_cgroup "$bin" build "$game" "${pargs[@]}" --backend cpu --out "$dir/external" --mem-limit "$mem" \
  --disk "$dir/diskA" --disk "$dir/diskB" --json > "$dir/external.json"
echo "== disk bandwidth, after the build"
measure_disk
echo "== the same build in memory"
"$bin" build "$game" "${pargs[@]}" --backend cpu --out "$dir/memory" --json > "$dir/memory.json"
for f in "$dir"/memory/*; do
  name=$(basename "$f"); [ "$name" = build-log.json ] && continue
  cmp -s "$f" "$dir/external/$name" || { echo "MISMATCH: $name differs between pipeline and in-memory builds"; exit 1; }
done
echo "pipeline and in-memory builds: identical bytes"

python3 - "$dir/external/build-log.json" "$dir/memory/build-log.json" "$w" "$r" "$mem" "${cg:+$cgroup_mb MiB}" <<'PY'
import json, sys
ext, mem = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
if ext["mode"] != "external" or ext["pipeline_seconds"] <= 0:
    sys.exit(f"the build fitted in {sys.argv[5]} and ran in memory: lower MEM or use a larger game")
w, r, limit, cgroup = float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6] or "none"
R, W = ext["scratch_bytes_read"], ext["scratch_bytes_written"]
t = ext["pipeline_seconds"]
sio = ext.get("storage_io") or {}
SR, SW = sio.get("read_bytes", 0), sio.get("write_bytes", 0)
print()
print(f"| {'measure':55} | {'value':>16} |")
print(f"|{'-'*57}|{'-'*18}|")
rows = [
    ("game", ext["game"]),
    ("positions", f"{ext['positions']:,}"),
    ("threads", ext["threads"]),
    ("memory limit / cgroup (RSS + page cache)", f"{limit} / {cgroup}"),
    ("peak RSS, pipeline build (MB)", f"{(ext['peak_rss'] or 0)/1e6:.1f}"),
    ("peak RSS, in-memory build (MB)", f"{(mem['peak_rss'] or 0)/1e6:.1f}"),
    ("build seconds: pipeline / in memory", f"{ext['seconds']:.2f} / {mem['seconds']:.2f}"),
    ("seconds in pipeline passes", f"{t:.2f}"),
    ("scratch MB read / written", f"{R/1e6:.0f} / {W/1e6:.0f}"),
    ("storage MB read / written (below page cache)", f"{SR/1e6:.0f} / {SW/1e6:.0f}"),
    ("disk sequential write / read (MB/s, best of 2 dd runs)", f"{w/1e6:.0f} / {r/1e6:.0f}"),
    ("pipeline scratch throughput (MB/s)", f"{(R+W)/t/1e6:.0f}"),
    ("disk time of scratch bytes / pipeline time", f"{(R/r + W/w)/t:.1%}"),
    ("disk time of storage bytes / pipeline time", f"{(SR/r + SW/w)/t:.1%}"),
    ("positions/s through the pipeline build", f"{ext['positions']/ext['seconds']:.3e}"),
]
for k, v in rows:
    print(f"| {k:55} | {v:>16} |")
prof = ext.get("pipeline_profile") or {}
if prof:
    print()
    print("where the pipeline's time went (seconds; flusher and wait times summed over threads):")
    print("  " + ", ".join(f"{k} {v:.2f}" for k, v in prof.items()))
PY
