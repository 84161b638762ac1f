#!/usr/bin/env bash
# On the GPU machine, from the repository root: the checkers frontier search
# (`tbforge analyse checkers --gpu`, issue 20) against its CPU twin and the
# alpha-beta search (`tbforge bench search`), then one table.
# 1. Random roots (by random play from the opening, a fresh seed each run):
#    the GPU and the twin must give every root the same value and every level
#    the same size; the alpha-beta search, root by root, the same value and
#    the same best move where it is unique.
# 2. From the opening, depths MIN..MAX (default 6..14; a depth that does not
#    fit the GPU's memory ends the table with the reason): leaves, the
#    evaluation pass's leaves/s (goal: >= 1 G), nodes/s of the whole search,
#    the twin's nodes/s on every core (up to CPU_MAX, default 12) and the
#    ratio, the alpha-beta search's time to the same depth on one thread,
#    and whether the values (and the best moves, where unique) agree.
# 3. The depth reached in T seconds (default 10) by the alpha-beta search on
#    every core and by the GPU.
# 4. The same comparisons from a middle-game position with kings (their
#    repetitions are scored as the search scores them: a draw), depths 6..13.
# The binary is built elsewhere (no Rust on the GPU machine):
#   cargo build --release && mkdir -p .device && strip -o .device/tbforge target/release/tbforge
# Settings: BIN, MIN, MAX, CPU_MAX, T, SAMPLES, SEED (default: the clock),
# DEVICE (default cuda; cpu: a dry run of the script without a GPU).
. "$(dirname "$0")/gpu_env.sh" tbforge-gpu-search
MIN=${MIN:-6}
MAX=${MAX:-14}
CPU_MAX=${CPU_MAX:-12}
T=${T:-10}
SAMPLES=${SAMPLES:-65536}
DEVICE=${DEVICE:-cuda}
seed=()
[ -n "${SEED:-}" ] && seed=(--seed "$SEED")
[ "$DEVICE" = cuda ] && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "== $(nproc) cores"

run() {
  local name=$1
  shift
  echo "== bench search $*"
  timeout 280 "$BIN" bench search checkers "$@" --device "$DEVICE" --samples "$SAMPLES" "${seed[@]}" --json \
    > "$OUT/$name.json" 2> "$OUT/$name.err"
  local rc=$?
  [ $rc -ne 0 ] && { status=1; echo "   exit $rc: $(tail -n 3 "$OUT/$name.err")"; }
  [ -s "$OUT/$name.json" ] || echo '{}' > "$OUT/$name.json"
}

run opening --min-depth "$MIN" --max-depth "$MAX" --cpu-max-depth "$CPU_MAX" --time "$T"
run kings "W:WK18,K25,22:B1,2,K12,14,17" --min-depth 6 --max-depth 13 \
  --cpu-max-depth 11 --time 5 --check-depth 5

python3 - "$OUT/opening.json" "$OUT/kings.json" <<'PY'
import json, sys

def load(p):
    try:
        return json.load(open(p))
    except Exception as e:
        return {"error": str(e)}

def rate(x, scale, fmt):
    width = int(fmt.split(".")[0])
    return format(x / scale, fmt) if x is not None else "-".rjust(width)

for path in sys.argv[1:]:
    v = load(path)
    if "depths" not in v:
        print(f"\n{path}: no result ({v.get('error', 'see the .err file')})")
        continue
    r = v["random"]
    print(f"\n{v['position']}   device: {v['device']}   twin: {v['twin']}   seed {v['seed']}")
    print(f"random roots: {r['roots']} at depth {r['depth']}, {r['leaves']:,} leaves: "
          f"{r['value_mismatches']} value mismatches, levels {'equal' if r['levels_match'] else 'DIFFER'}; "
          f"alpha-beta on {r['alpha_beta_roots']}: {r['alpha_beta_value_mismatches']} value mismatches, "
          f"{r['alpha_beta_best_move_mismatches']} of {r['unique_best_moves']} unique best moves differ")
    if r.get("first_difference"):
        print(r["first_difference"])
    print(f"{'depth':>5} {'leaves':>15} {'GPU s':>8} {'G leaves/s':>10} {'G nodes/s':>9} "
          f"{'twin M n/s':>10} {'GPU/twin':>8} {'a-b 1t s':>8} {'value':>7} {'agree':>5} {'best':>8}")
    for d in v["depths"]:
        if "error" in d:
            print(f"{d['depth']:>5} stops: {d['error']}")
            continue
        twin = d["twin_nodes_per_second"]
        ratio = f"{d['nodes_per_second'] / twin:8.1f}" if twin else f"{'-':>8}"
        agree = "yes" if d["agree"] and d["best_move_agrees"] else "NO"
        best = (d["best_move"] or "-") + ("" if d["best_moves"] == 1 else "*")
        print(f"{d['depth']:>5} {d['leaves']:>15,} {d['seconds']:>8.3f} {rate(d['leaves_per_second'], 1e9, '10.3f')} "
              f"{rate(d['nodes_per_second'], 1e9, '9.3f')} {rate(twin, 1e6, '10.1f')} {ratio} "
              f"{d['alpha_beta_seconds']:>8.3f} {d['value']:>7} {agree:>5} {best:>8}")
        if d.get("first_difference"):
            print(d["first_difference"])
    t = v["in_time"]
    ab, fr = t["alpha_beta"], t["frontier"]
    print(f"in {t['seconds']} s: alpha-beta (every core) depth {ab['depth']} at "
          f"{ab['nodes_per_second'] / 1e6:.1f} M nodes/s, best {ab['best_move']}; "
          f"GPU frontier depth {fr['depth']} ({fr['leaves_per_second'] / 1e9:.3f} G leaves/s, "
          f"{fr['nodes_per_second'] / 1e9:.3f} G nodes/s), best {fr['best_move']}"
          + (f"; stopped: {fr['stopped']}" if fr.get("stopped") else ""))
    print("all agree" if v.get("all_agree") else "DISAGREEMENT: see the rows marked NO")
print("* several moves share the value: best moves not compared")
PY
exit $status
