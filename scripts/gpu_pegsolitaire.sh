#!/usr/bin/env bash
# On the GPU machine, from the repository root: peg solitaire on the GPU (kernels/pegsolitaire.cu)
# against its CPU twins (pegsolitaire::kernels) and Table 0.4 of S. Edelkamp's "BDDs for Minimal
# Perfect Hashing" (English 33-hole board, 2^33 indices, 187,636,299 positions reachable).
# 1. `tbforge bench gpu pegsolitaire`: the forward search (pg_expand) against the twin on all
#    cores, then every partition's values (pg_solve): byte for byte against the twin up to
#    CPU_MAX indices (default 2e8), beyond on random indices recomputed by the twin.
# 2. `tbforge build pegsolitaire` with --backend cuda, its layers against Table 0.4 (row Holes=31
#    read as 32, tests/puzzle_pegsolitaire.rs says why), then with --backend cpu (16 threads,
#    skipped with SKIP_CPU=1) and every file compared with cmp (build-log.json aside).
# Prints a table and exits 1 on any mismatch or failed run.
# Build elsewhere (no Rust on the GPU machine):
#   cargo build --release && mkdir -p .device && strip -o .device/tbforge target/release/tbforge
#   bash scripts/gpu_pegsolitaire.sh
. "$(dirname "$0")/gpu_env.sh" tbforge-pegsolitaire
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/host.txt"
echo "== $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, binary $BIN"
seed=()
[ -n "${SEED:-}" ] && seed=(--seed "$SEED")
echo "== bench gpu pegsolitaire"
"$BIN" bench gpu pegsolitaire --cpu-max-size "${CPU_MAX:-200000000}" "${seed[@]}" || status=1

declare -A secs=()
backends="cuda"
[ "${SKIP_CPU:-}" = 1 ] || backends="cuda cpu"
for backend in $backends; do
  dir="$WORK/$backend"
  rm -rf "$dir"
  start=$(date +%s.%N)
  "$BIN" build pegsolitaire --backend "$backend" --out "$dir" --json >"$OUT/$backend.json" \
    2>"$OUT/$backend.err" || { status=1; tail -3 "$OUT/$backend.err"; }
  secs[$backend]=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$start" "$(date +%s.%N)")
done
"$BIN" info "$WORK/cuda" --json >"$OUT/info.json" || status=1
python3 - "$OUT/info.json" <<'PY' || status=1
import json, sys
info = json.load(open(sys.argv[1]))
# Table 0.4, Expanded, rows Holes = 1..32, row 31 corrected from 33 to 32.
T04 = [1, 4, 12, 60, 296, 1338, 5648, 21842, 77559, 249690, 717788, 1834379, 4138302, 8171208,
       14020166, 20773236, 26482824, 28994876, 27286330, 22106348, 15425572, 9274496, 4792664,
       2120101, 800152, 255544, 68236, 14727, 2529, 334, 32, 5]
layers = info["layers"]
ok = layers == T04
print(f"forward layers ({len(layers)}, {sum(layers):,} positions) {'equal' if ok else 'DIFFER from'} Table 0.4")
if not ok:
    print(layers)
sys.exit(0 if ok else 1)
PY
same=skipped
if [ -d "$WORK/cpu" ]; then
  same=yes
  for f in "$WORK/cpu"/*; do
    name=$(basename "$f")
    [ "$name" = build-log.json ] && continue
    cmp -s "$f" "$WORK/cuda/$name" || { same=NO; echo "differs: $name"; }
  done
  [ "$(ls "$WORK/cpu" | wc -l)" = "$(ls "$WORK/cuda" | wc -l)" ] || same=NO
  [ "$same" = yes ] || status=1
fi
echo
echo "| build pegsolitaire (2^33 indices) | CPU $(nproc) threads s | GPU s | ratio | files identical |"
echo "| --- | ---: | ---: | ---: | --- |"
python3 -c "import sys; c, g = sys.argv[1], float(sys.argv[2]); print(f'| whole board | {c or \"-\"} | {g:.2f} | {(f\"{float(c) / g:.1f}x\") if c else \"-\"} | {sys.argv[3]} |')" \
  "${secs[cpu]:-}" "${secs[cuda]}" "$same"
rm -rf "$WORK/cpu" "$WORK/cuda"
exit $status
