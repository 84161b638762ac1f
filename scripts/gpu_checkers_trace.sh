#!/usr/bin/env bash
# On the GPU machine, from the repository root: where a checkers CUDA build's
# time goes (issue 19), from the solver's trace (TBFORGE_TWIN_TRACE: one line
# per partition with its upload, first scan, successor lists, passes and
# download seconds) and the build log (solve, count and write seconds).
#   bash scripts/gpu_checkers_trace.sh [PIECES] [SECONDS]
# PIECES defaults to 6; a build still running after SECONDS (default 500) is
# stopped and the partitions it finished are summarised. The manifest, the
# build log and the trace go to $OUT.
. "$(dirname "$0")/gpu_env.sh" tbforge-checkers-trace
pieces=${1:-6}
limit=${2:-500}
dir=$WORK/trace-$pieces
rm -rf "$dir"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "== checkers pieces=$pieces, CUDA, traced, at most $limit s"
TBFORGE_TWIN_TRACE=1 /usr/bin/time -f "   %e s wall, %M KB peak" timeout "$limit" "$BIN" build checkers \
  --param pieces="$pieces" --backend cuda --out "$dir" > "$OUT/build-$pieces.txt" 2> "$OUT/trace-$pieces.txt"
echo "   exit $?"
tail -1 "$OUT/trace-$pieces.txt"
[ -f "$dir/manifest.json" ] && cp "$dir/manifest.json" "$OUT/manifest-$pieces.json"
[ -f "$dir/build-log.json" ] && cp "$dir/build-log.json" "$OUT/build-log-$pieces.json"
python3 - "$OUT/trace-$pieces.txt" "$dir/build-log.json" <<'PY'
import json, os, re, sys
line = re.compile(r"checkers gpu (\S+): (\d+) indices, (\d+) dependency bytes, (\d+) pending, "
                  r"(\d+) successors listed, (\d+) passes, (\d+) live entries scanned; seconds: upload ([\d.]+), first scan ([\d.]+), "
                  r"lists ([\d.]+), passes ([\d.]+), download ([\d.]+)")
rows = []
for text in open(sys.argv[1], errors="replace"):
    m = line.search(text)
    if m:
        name = m.group(1)
        rows.append((name, int(name[1:name.index("-")]) if name.startswith("p") else 0,
                     *map(int, m.groups()[1:7]), *map(float, m.groups()[7:])))
steps = ["upload", "first scan", "lists", "passes", "download"]
print("   %d partitions traced" % len(rows))
print("   | pieces | partitions | G indices | pending | G successors | passes (sum) | live/scanned | " +
      " | ".join(steps) + " | device s |")
print("   |" + " --- |" * (8 + len(steps)))
for k in sorted({r[1] for r in rows}):
    rs = [r for r in rows if r[1] == k]
    col = lambda i: sum(r[i] for r in rs)
    scanned = sum(r[4] * r[6] for r in rs)
    print("   | %d | %d | %.2f | %.1f %% | %.2f | %d | %.3f | %s | %.1f |" % (
        k, len(rs), col(2) / 1e9, 100.0 * col(4) / max(col(2), 1), col(5) / 1e9, col(6),
        col(7) / max(scanned, 1), " | ".join("%.1f" % col(8 + i) for i in range(len(steps))),
        sum(col(8 + i) for i in range(len(steps)))))
print("   slowest partitions:")
for r in sorted(rows, key=lambda r: -sum(r[8:]))[:12]:
    print("     %-26s %11d indices %5.1f %% pending %4d passes, live %.3f: %s" % (
        r[0], r[2], 100.0 * r[4] / max(r[2], 1), r[6], r[7] / max(r[4] * r[6], 1),
        ", ".join("%s %.2f" % (s, v) for s, v in zip(steps, r[8:]))))
if os.path.exists(sys.argv[2]):
    log = json.load(open(sys.argv[2]))
    stages = next((v for v in log.values() if isinstance(v, list) and v and isinstance(v[0], dict)
                   and "solve_seconds" in v[0]), [])
    tot = lambda k: sum((s.get(k) or 0.0) for s in stages)
    print("   build log: %.1f s; of its partitions: solve %.1f s (device %.1f s), count %.1f s, write %.1f s"
          % (log["seconds"], tot("solve_seconds"), tot("device_seconds"), tot("count_seconds"),
             tot("write_seconds")))
PY
exit $status
