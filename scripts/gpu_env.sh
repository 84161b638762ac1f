# Sourced by the GPU machine's scripts (`. "$(dirname "$0")/gpu_env.sh" NAME`):
# the binary (BIN, default .device/tbforge), the log and work folders (OUT,
# WORK, default /tmp/NAME and /tmp/NAME-work), the machine's own NVRTC (PTX
# from a newer NVRTC is refused by an older driver) and the exit status.
set -uo pipefail
BIN=${BIN:-.device/tbforge}
OUT=${OUT:-/tmp/$1}
WORK=${WORK:-/tmp/$1-work}
mkdir -p "$OUT" "$WORK"
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
status=0
