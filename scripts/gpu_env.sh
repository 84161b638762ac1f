# Sourced by the GPU machine's scripts (`. "$(dirname "$0")/gpu_env.sh" NAME`):
# the binary (BIN, default .device/tbforge), the log and work folders (OUT,
# WORK, default /tmp/NAME and /tmp/NAME-work), the machine's own NVRTC (PTX
# from a newer NVRTC is refused by an older driver), the exit status, and
# `same`, which compares two build directories byte for byte,
# `streamed_mem_limit`, the --mem-limit streamed builds are measured under,
# and `disk_rates`, the scratch disk's sequential rates.
set -uo pipefail
BIN=${BIN:-.device/tbforge}
OUT=${OUT:-/tmp/$1}
WORK=${WORK:-/tmp/$1-work}
mkdir -p "$OUT" "$WORK"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
status=0

# Whether two build directories hold the same bytes (build-log.json and
# hidden files aside): prints "identical" or "DIFFERENT (...)".
same() {
  python3 - "$1" "$2" <<'PY'
import os, sys, hashlib
def files(d):
    return {f: hashlib.sha256(open(os.path.join(d, f), 'rb').read()).hexdigest()
            for f in sorted(os.listdir(d)) if f != 'build-log.json' and not f.startswith('.')}
a, b = files(sys.argv[1]), files(sys.argv[2])
print("identical" if a == b and a else f"DIFFERENT ({len(a)} vs {len(b)} files)")
PY
}

# The --mem-limit for a streamed build of the game whose in-memory CPU build
# is in directory $1: small enough that chunks are many. Half a byte a
# position, at least 64 MiB (below that, jobs sized to the write buffers
# get so small that Morris max=4 takes minutes), and at least 3 bytes an
# index of the largest partition, so that a pass's candidate bits, an
# eighth of a byte an index, fit the sixteenth of the budget the plan
# leaves them (without them a Morris pass expands every pending position,
# ~170 times over). With $2, an in-memory GPU build's directory, the host
# memory its device kept resident (`device_host_bytes`, ~150-190 MB on an
# H200 host) is added: --mem-limit bounds the whole process, the driver too.
streamed_mem_limit() {
  python3 - "$1/build-log.json" "${2:-}" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
largest = max(p["index_size"] for p in log["partitions"])
device = json.load(open(f"{sys.argv[2]}/build-log.json")).get("device_host_bytes") or 0 if sys.argv[2] else 0
print(max(log["positions"] // 2, 64 * 1048576, 3 * largest) + device)
PY
}

# The scratch disk's sequential rates, in bytes per second, into DISK_W and
# DISK_R: dd with direct I/O (the page cache aside) of DISK_GB GiB (default
# 4) in $WORK.
disk_rates() {
  local gb=${DISK_GB:-4}
  rate() { # dd's last line -> bytes per second
    python3 -c 'import sys,re
l=sys.stdin.read().strip().splitlines()[-1]
m=re.match(r"(\d+) bytes.*copied, ([0-9.]+) s", l); print(int(m.group(1))/float(m.group(2)))'
  }
  sync
  DISK_W=$(dd if=/dev/zero of="$WORK/seq" bs=16M count=$((gb * 64)) oflag=direct conv=fdatasync 2>&1 | rate)
  DISK_R=$(dd if="$WORK/seq" of=/dev/null bs=16M iflag=direct 2>&1 | rate)
  rm -f "$WORK/seq"
}
