#!/usr/bin/env bash
# Layered symbolic BFS of Connect Four with `tbforge bdd-count`, beside the published numbers.
# # Source: S. Edelkamp, "BDDs for Minimal Perfect Hashing: Merging Two State-Space Compression
# Techniques", Table 0.8 (reachable states per layer: 5x5, 6x5, 5x6, 6x6, 7x6) and Table 0.9
# (7x6: BDD nodes and states per layer).
#
# Usage: scripts/bdd_count.sh [BOARD...]   (boards as WxH; default: 5x5 6x5 5x6 6x6 7x6)
# Environment: TBFORGE (binary; default: cargo build --release), THREADS, MEM (e.g. 100G).
# Prints per board: layer, our nodes, the published nodes (7x6), our states, the published states,
# a mark where they differ; then wall time and peak memory as tbforge reports them.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${TBFORGE:-}" ]]; then
    cargo build --release --quiet
    TBFORGE=target/release/tbforge
fi
boards=("$@")
[[ ${#boards[@]} -gt 0 ]] || boards=(5x5 6x5 5x6 6x6 7x6)
extra=()
[[ -n "${THREADS:-}" ]] && extra+=(--threads "$THREADS")
[[ -n "${MEM:-}" ]] && extra+=(--mem-limit "$MEM")

published() {  # BOARD -> "layer nodes states" lines (nodes "-" where not published)
    python3 - "$1" <<'PY'
import sys
t08 = {
 "7x6": "1 7 49 238 1120 4263 16422 54859 184275 558186 1662623 4568683 12236101 30929111 75437595 176541259 394591391 858218743 1763883894 3568259802 6746155945 12673345045 22010823988 38263228189 60830813459 97266114959 140728569039 205289508055 268057611944 352626845666 410378505447 479206477733 488906447183 496636890702 433471730336 370947887723 266313901222 183615682381 104004465349 55156010773 22695896495 7811825938 1459332899",
 "6x6": "1 6 36 156 651 2256 7876 24330 74922 211042 576266 1468114 3596076 8394784 18629174 39979044 80684814 159433890 292803624 531045746 884124974 1463364020 2196180492 3286589804 4398259442 5862955926 6891603916 8034014154 8106160185 7994700764 6636410522 5261162538 3435759942 2095299732 998252492 401230354 90026720",
 "6x5": "1 6 36 156 651 2256 7870 24120 72312 194122 502058 1202338 2734506 5868640 11812224 22771514 40496484 69753028 108862608 165943600 224098249 296344032 338749998 378092536 352607428 314710752 224395452 149076078 74046977 30162078 6440532",
 "5x6": "1 5 25 95 345 1075 3355 9495 26480 68602 169107 394032 866916 1836560 3620237 6955925 12286909 21344079 33562334 51966652 71726433 97556959 116176690 134736003 132834750 124251351 97021801 70647088 40708770 19932896 5629467",
 "5x5": "1 5 25 95 345 1075 3350 9355 25060 60842 139632 299764 596136 1128408 1948956 3231341 4769837 6789890 8396345 9955530 9812925 9020543 6632480 4345913 2011598 584249",
}
t09 = "85 163 316 513 890 1502 2390 4022 7231 12300 21304 36285 56360 98509 155224 299618 477658 909552 1411969 2579276 3819845 6484038 9021770 14147195 18419345 26752487 32470229 43735234 49881463 62630776 67227899 78552207 78855269 86113718 81020323 81731891 70932427 64284620 49500513 38777133 24442147 13880474 4839221".split()
states = t08.get(sys.argv[1], "").split()
for i, s in enumerate(states):
    print(i, t09[i] if sys.argv[1] == "7x6" else "-", s)
PY
}

for board in "${boards[@]}"; do
    w=${board%x*}; h=${board#*x}
    out=$(mktemp)
    start=$(date +%s.%N)
    "$TBFORGE" bdd-count connect4 --param "width=$w" --param "height=$h" --json "${extra[@]}" >"$out"
    end=$(date +%s.%N)
    echo "== connect4 $board"
    python3 - "$out" "$start" "$end" <(published "$board") <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
pub = {int(l.split()[0]): l.split()[1:] for l in open(sys.argv[4]) if l.strip()}
print(f"{'layer':>5} {'nodes':>11} {'published':>11} {'states':>16} {'published':>16}")
bad = 0
for row in r["layers"]:
    d = row["layer"]; pn, ps = pub.get(d, ["-", "-"])
    mark = ""
    if ps != "-" and int(ps) != row["states"]:
        mark = "  <- states differ"; bad += 1
    elif pn != "-" and int(pn) != row["nodes"]:
        mark = f"  (nodes {row['nodes'] - int(pn):+d})"
    print(f"{d:>5} {row['nodes']:>11} {pn:>11} {row['states']:>16} {ps:>16}{mark}")
total_pub = sum(int(v[1]) for v in pub.values()) if pub else None
print(f"total {r['total']} states (published {total_pub}); largest layer BDD {r['peak_layer_nodes']} nodes")
peak = r.get("peak_memory_bytes")
print(f"wall {float(sys.argv[3]) - float(sys.argv[2]):.1f} s (search {r['seconds']:.1f} s), "
      f"{r['threads']} threads, peak memory {peak / 2**30 if peak else float('nan'):.2f} GiB")
if bad or (total_pub is not None and total_pub != r["total"]):
    print("MISMATCH against the published states"); sys.exit(1)
PY
    rm -f "$out"
done
