#!/usr/bin/env bash
# On a machine with two or more GPUs (nvidia-h200-x2): one tablebase built by
# several GPUs, checked and measured in one run, printed as tables.
# 1. Morris max=SAME_MAX (default 6) and Connect Four 6x5: one GPU, `--gpus
#    all` (one thread per GPU) and `mpirun -np GPUS` (one rank per GPU):
#    byte-identical, with their times.
# 2. Morris max=BIG (default 8; a list, e.g. "8 9", runs each): one GPU
#    against `--gpus all`, in the same run:
#    per partition the solve time on each, the split's communication (seconds
#    and bytes in the team's collectives, the waiting for the slowest member
#    included), passes; totals and the speed-up of the solves and of the build.
# 3. MPI on the CPU (the scale-out issue's goal): Morris max=CPU_MAX (default
#    6) with one process of CPU_THREADS (default 16) threads against `mpirun
#    -np N` ranks of CPU_THREADS/N threads for N in CPU_NPS (default "1 2 4"),
#    and with --no-shared-memory for N in CPU_APART (default 4; "" for none):
#    same bytes, times, communication, and docs/SCALING.md's model
#    (scripts/scaling_model.py) beside the measurement.
# On a one-GPU machine, part 1's MPI build runs two ranks on the one GPU and
# part 2's two members share it (`--gpus 0,0`): a check of the bytes.
# The binary is built elsewhere with MPI (no Rust on the GPU machine):
#   cargo build --release --features mpi
#   mkdir -p .device && strip -o .device/tbforge target/release/tbforge && cp scripts/*.sh .device/
# Where the machine has no Open MPI (or another MPI), put Debian's packages (openmpi-bin,
# libopenmpi3 and their libraries; `apt-get download`) in OMPI_DEBS (default
# .device/ompi): they are unpacked under WORK and used from there
# (OPAL_PREFIX); the binary needs libmpi even when run without mpirun.
. "$(dirname "$0")/gpu_env.sh" tbforge-multi-gpu
# NVLink multicast stays off on shared hosts (nothing here uses NCCL, but
# whatever is started from here inherits it).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
MPIRUN=mpirun
# Another MPI's mpirun (the machine's own) cannot start Open MPI ranks.
if ! mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  debs=${OMPI_DEBS:-.device/ompi}
  prefix="$WORK/ompi"
  rm -rf "$prefix"; mkdir -p "$prefix"
  for f in "$debs"/*.deb; do dpkg -x "$f" "$prefix"; done
  export OPAL_PREFIX="$prefix/usr"
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:$prefix/usr/lib/x86_64-linux-gnu/openmpi/lib:$LD_LIBRARY_PATH"
  MPIRUN="$prefix/usr/bin/orterun"
fi
MPIRUN="$MPIRUN --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE"
[ -n "${OPAL_PREFIX:-}" ] && MPIRUN="$MPIRUN -x OPAL_PREFIX"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -4
GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
# One rank per GPU; on a one-GPU machine two ranks share it, and --gpus
# runs two members on it (`--gpus 0,0`: the bytes, not a speed-up).
RANKS=$(( GPUS > 1 ? GPUS : 2 ))
GPU_LIST=all; [ "$GPUS" -lt 2 ] && GPU_LIST=0,0
CPU_THREADS=${CPU_THREADS:-16}
echo "== $GPUS GPUs, $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $($MPIRUN --version 2>&1 | head -1)"

# Builds GAME-PARAMS into DIR, timed; mode: one (GPU 0 alone), all (--gpus
# all), mpi (one rank per GPU), cpu1 / cpu4 (CPU: one process, 4 ranks).
run() {
  local mode=$1 dir=$2; shift 2
  rm -rf "$dir"
  local t0=$(date +%s.%N)
  case $mode in
    one) CUDA_VISIBLE_DEVICES=0 "$BIN" build "$@" --backend cuda --out "$dir" --json ;;
    all) "$BIN" build "$@" --backend cuda --gpus "$GPU_LIST" --out "$dir" --json ;;
    split) "$BIN" build "$@" --backend cuda --gpus "$GPU_LIST" --side-by-side off --out "$dir" --json ;;
    mpi) $MPIRUN -np "$RANKS" "$BIN" build "$@" --backend cuda --out "$dir" --json ;;
    cpu*) local np=${mode#cpu} messages=""
      # cpuNapart: ranks exchange through messages, as on several hosts.
      case $np in *apart) np=${np%apart}; messages=--no-shared-memory ;; esac
      if [ "$np" = 1 ]; then
        "$BIN" build "$@" --backend cpu --threads "$CPU_THREADS" --out "$dir" --json
      else
        $MPIRUN -np "$np" "$BIN" build "$@" --backend cpu --threads $(( CPU_THREADS / np )) $messages --out "$dir" --json
      fi ;;
  esac >"$dir.json" 2>"$dir.err" || { status=1; echo "FAILED: $mode $*"; tail -3 "$dir.err"; }
  awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t0 }" >"$dir.time"
}

# Whether two tablebase directories hold the same files, byte for byte.
same() {
  local a=$1 b=$2 bad=0
  for f in "$a"/*; do
    local name=$(basename "$f"); [ "$name" = build-log.json ] && continue
    cmp -s "$f" "$b/$name" || bad=1
  done
  [ "$(ls "$a" | wc -l)" = "$(ls "$b" | wc -l)" ] || bad=1
  [ $bad = 0 ] && echo identical || { status=1; echo DIFFERENT; }
}

[ "${SKIP_SAME:-}" = 1 ] || {
echo
echo "| build | 1 GPU s | --gpus all s | mpirun -np $RANKS s | bytes (all, mpi vs 1 GPU) |"
echo "| --- | ---: | ---: | ---: | --- |"
for spec in "morris --param max=${SAME_MAX:-6}" "connect4 --param width=6 --param height=5"; do
  tag=$(echo "$spec" | tr -c 'a-z0-9' '_')
  for mode in one all mpi; do run $mode "$WORK/$tag-$mode" $spec; done
  echo "| $spec | $(cat "$WORK/$tag-one.time") | $(cat "$WORK/$tag-all.time") | $(cat "$WORK/$tag-mpi.time") | $(same "$WORK/$tag-one" "$WORK/$tag-all"), $(same "$WORK/$tag-one" "$WORK/$tag-mpi") |"
done
}

for big in ${BIG:-8}; do
if [ "$big" != none ]; then
  [ "$GPUS" -lt 2 ] && echo "== one GPU: two members share it (--gpus 0,0); the bytes count, the times do not"
  # 1 GPU, then --gpus all (partitions side by side where they allow,
  # the default), then --gpus all splitting every partition, one after the
  # other on the same machine.
  run one "$WORK/big$big-one" morris --param max="$big"
  run all "$WORK/big$big-all" morris --param max="$big"
  run split "$WORK/big$big-split" morris --param max="$big"
  # The logs come back with the run (docs/SCALING.md's model needs every partition's).
  [ -n "${OUT:-}" ] && for m in one all split; do cp "$WORK/big$big-$m/build-log.json" "$OUT/big$big-$m-build-log.json"; done
  echo
  echo "== Morris max=$big: 1 GPU $(cat "$WORK/big$big-one.time") s, --gpus all $(cat "$WORK/big$big-all.time") s, --gpus all --side-by-side off $(cat "$WORK/big$big-split.time") s (process wall); bytes $(same "$WORK/big$big-one" "$WORK/big$big-all"), $(same "$WORK/big$big-one" "$WORK/big$big-split")"
  python3 - "$WORK/big$big-one/build-log.json" "$WORK/big$big-all/build-log.json" "$WORK/big$big-split/build-log.json" <<'PY'
import json, sys
one, two, split_log = (json.load(open(p)) for p in sys.argv[1:4])
a = {p["name"]: p for p in one["partitions"]}
sp = {p["name"]: p for p in split_log["partitions"]}
rows = []
for p in two["partitions"]:
    q = a.get(p["name"])
    if not q: continue
    c = p.get("communication") or {}
    by = p.get("solved_by")
    # Side by side, a round's seconds go to its first partition: the
    # partition's own time is its owner's device seconds.
    own = p.get("device_seconds") if by is not None else p["solve_seconds"]
    rows.append((p["name"], p["index_size"], q["solve_seconds"], own or 0.0,
                 sp.get(p["name"], {}).get("solve_seconds", 0.0),
                 "split" if by is None else f"GPU {by}",
                 c.get("seconds", 0.0), c.get("bytes_sent", 0) + c.get("bytes_received", 0),
                 p.get("passes") or 0))
rows.sort(key=lambda r: -r[2])
print("| partition | indices | 1 GPU solve s | 2 GPUs: solved by | its solve s | split over 2 GPUs s | split speed-up | comm s | comm MB | passes |")
print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows[:14]:
    print(f"| {r[0]} | {r[1]:,} | {r[2]:.3f} | {r[5]} | {r[3]:.3f} | {r[4]:.3f} | {r[2]/max(r[4],1e-9):.2f} | {r[6]:.3f} | {r[7]/1e6:.1f} | {r[8]} |")
s1 = sum(r[2] for r in rows); s3 = sum(r[4] for r in rows)
print(f"| all {len(rows)} | {sum(r[1] for r in rows):,} | {s1:.2f} | | | {s3:.2f} | {s1/max(s3,1e-9):.2f} | | | |")
t1, t2, t3 = one["seconds"], two["seconds"], split_log["seconds"]
print()
print("| build (the logs' seconds) | 1 GPU | 2 GPUs side by side | 2 GPUs split |")
print("| --- | ---: | ---: | ---: |")
print(f"| seconds | {t1:.2f} | {t2:.2f} | {t3:.2f} |")
print(f"| speed-up over 1 GPU | 1.00 | {t1/t2:.2f} | {t1/t3:.2f} |")
print(f"| solves' seconds (sum) | {sum(p['solve_seconds'] for p in one['partitions']):.2f} | {sum(p['solve_seconds'] for p in two['partitions']):.2f} | {sum(p['solve_seconds'] for p in split_log['partitions']):.2f} |")
print(f"| forward seconds | {one['forward_seconds']:.2f} | {two['forward_seconds']:.2f} | {split_log['forward_seconds']:.2f} |")
for name, log in (("side by side", two), ("split", split_log)):
    c = log["communication"]
    print(f"communication, {name}: {c['seconds']:.2f} s in {c.get('calls', 0)} collectives, {(c['bytes_sent']+c['bytes_received'])/1e9:.2f} GB")
two = split_log  # the model below is the split's
# docs/SCALING.md's model for N GPUs of one host (peer copies), from the
# one-GPU log alone: a partition of at least 32 M indices is split, costing
# C S(p) + passes(p) (L + (N-1) index(p) / 8 / P) (its bitmap sent each
# pass); a smaller one is solved whole by every GPU, costing S(p). C, L, P
# were fitted on the 2026-11-28 run (two H100s): 0.78, 0.5 ms, 180 GB/s.
N = two.get("ranks") or 2
C, L, P = 0.78, 0.5e-3, 180e9
S = sum(p["solve_seconds"] or 0 for p in one["partitions"])
def split(p):
    if p["index_size"] < (1 << 25) or not p.get("passes"):
        return p["solve_seconds"] or 0
    return C * p["solve_seconds"] + p["passes"] * (L + (N - 1) * p["index_size"] / 8 / P)
pred = one["seconds"] - S + sum(split(p) for p in one["partitions"])
err = (two["seconds"] - pred) / pred
print(f"model of the split (docs/SCALING.md: C {C}, L {L*1e3:.1f} ms, P {P/1e9:.0f} GB/s): {N} GPUs predicted {pred:.2f} s "
      f"(solves {S:.2f} s on one GPU), measured {two['seconds']:.2f} s, error {err:+.0%}")
# Side by side (docs/SCALING.md): the build's rounds replayed on the
# one-GPU log. A round takes its busiest member's one-GPU solves plus the
# values handed over (H bytes/s); a partition alone in its round is split.
H = 10e9
parts = one["partitions"]
names = [p["name"] for p in parts]
def reads(name):
    a, b = map(int, name.split("-"))
    if a == 2:
        return []
    out = []
    for mover, opp in {(a, b), (b, a)}:
        left = opp - 1
        out.append(f"2-{mover}" if left == 2 else f"{max(mover, left)}-{min(mover, left)}")
    return out
done, t_pred, rounds = set(), one["seconds"] - S, 0
for i, p in enumerate(parts):
    if p["name"] in done:
        continue
    def ok(q):
        return q["name"] not in done and all(r in done or (r in names and names.index(r) < i) for r in reads(q["name"]))
    ready = [q for q in parts[i:] if ok(q)] if ok(p) else []
    # The build's plan: the largest first to the least loaded (in indices).
    load, t = [0] * N, [0.0] * N
    for q in sorted(ready, key=lambda q: -q["index_size"]):
        m = min(range(N), key=lambda m: (load[m], m))
        load[m] += q["index_size"]; t[m] += q["solve_seconds"] or 0
    if len(ready) >= 2 and max(load) <= 0.8 * sum(load):
        t_pred += max(t) + sum(q["index_size"] for q in ready) / H
        done |= {q["name"] for q in ready}; rounds += 1
    else:
        t_pred += split(p); done.add(p["name"])
side = json.load(open(sys.argv[2]))
print(f"model side by side: {rounds} rounds, predicted {t_pred:.2f} s, measured {side['seconds']:.2f} s, "
      f"error {(side['seconds'] - t_pred) / t_pred:+.0%}")
PY
fi
# The disk is small: a pair goes once its table is printed.
rm -rf "$WORK/big$big-one" "$WORK/big$big-all" "$WORK/big$big-split"
done

cpu=${CPU_MAX:-6}
if [ "$cpu" != none ]; then
  nps=${CPU_NPS:-1 2 4}
  apart=${CPU_APART:-4}
  for np in $nps; do run "cpu$np" "$WORK/cpu-$np" morris --param max="$cpu"; done
  for np in $apart; do run "cpu${np}apart" "$WORK/cpu-${np}apart" morris --param max="$cpu"; done
  echo
  echo "== CPU, Morris max=$cpu, $CPU_THREADS threads in all: one process, and mpirun -np N ranks of $CPU_THREADS/N threads"
  echo "   (ranks of this host share the values in memory; 'apart': --no-shared-memory, messages as between hosts)"
  for np in $nps; do [ "$np" = 1 ] || echo "   -np $np: $(cat "$WORK/cpu-$np.time") s, bytes $(same "$WORK/cpu-1" "$WORK/cpu-$np")"; done
  for np in $apart; do echo "   -np $np apart: $(cat "$WORK/cpu-${np}apart.time") s, bytes $(same "$WORK/cpu-1" "$WORK/cpu-${np}apart")"; done
  args=""; for np in $nps; do args="$args $np $WORK/cpu-$np/build-log.json $(cat "$WORK/cpu-$np.time")"; done
  python3 "$(dirname "$0")/scaling_model.py" $args
fi
exit $status
