#!/usr/bin/env python3
"""Where a pipeline build's passes spent their time, from its pass journal.

    python3 scripts/pass_journal.py OUT_DIR [GROUPS [WRITE_RATE READ_RATE]]

Reads OUT_DIR/.tbforge-passes.jsonl (a build still running or cut short) or,
failing that, the passes of OUT_DIR/build-log.json (a finished build). Prints
one row per partition, then the passes of the partition with the most of
them in GROUPS (default 10) groups of consecutive passes: early passes,
whose candidates reach every chunk, and late ones differ. With the disk's
sequential rates (bytes per second), a last column sets each step's wall
seconds beside the seconds the disk needs for the step's scratch bytes.
"""
import json
import os
import sys


def load(out):
    journal = os.path.join(out, ".tbforge-passes.jsonl")
    if os.path.exists(journal):
        with open(journal) as f:
            return [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(out, "build-log.json")) as f:
        log = json.load(f)
    return [dict(p, partition=part["name"]) for part in log["partitions"]
            for p in part.get("pipeline_passes", [])]


COLUMNS = ["passes", "jobs", "wall s", "marking s", "expand s", "answer s", "combine s",
           "read GB", "written GB", "requests M", "candidates M", "settled by summary M",
           "kernel s", "staging s",
           "wait reads s", "wait device s", "wait flushers s", "wait runs s",
           "wait write-back s", "wait marking s", "stretch reads K", "value writes K",
           "cores busy: pass / expand / answer / combine and marking"]


STEPS = ["marking", "expand", "answer", "combine"]
RATES = None


def row(label, passes):
    s = lambda k: sum(p.get(k) or 0 for p in passes)
    w = lambda k: sum(p["waits"].get(k, 0) for p in passes)
    kernel = sum(p["device"].get("kernel_seconds", 0) for p in passes)
    cells = [len(passes), s("jobs"), s("seconds"), s("candidate_seconds"), s("expand_seconds"),
             s("answer_seconds"), s("combine_seconds"), s("bytes_read") / 1e9,
             s("bytes_written") / 1e9, s("requests") / 1e6, s("candidates") / 1e6,
             s("settled_by_summary") / 1e6, kernel,
             sum(p["device"].get("host_stage_seconds", 0) for p in passes),
             w("for_chunk_reads"), w("for_device"), w("for_flushers"), w("for_run_reads"),
             w("for_write_back"), w("for_marking"), s("stretch_reads") / 1e3,
             s("value_writes") / 1e3]
    text = [str(cells[0]), str(cells[1])] + [f"{c:.2f}" for c in cells[2:]]
    # Process CPU seconds (all threads) over wall seconds, where recorded.
    cpu = lambda k: sum(p.get("cpu_seconds", {}).get(k, 0) for p in passes)
    cores = lambda c, wall: f"{c / wall:.1f}" if wall > 0 and c > 0 else "-"
    text.append(" / ".join([
        cores(cpu("pass"), s("seconds")), cores(cpu("expand"), s("expand_seconds")),
        cores(cpu("answer"), s("answer_seconds")),
        cores(cpu("combine") + cpu("marking"), s("combine_seconds") + s("candidate_seconds"))]))
    if RATES:
        w, r = RATES
        wall = {"marking": s("candidate_seconds"), "expand": s("expand_seconds"),
                "answer": s("answer_seconds"), "combine": s("combine_seconds")}
        disk = lambda k: sum(p.get("step_bytes", {}).get(k, [0, 0])[0] / r +
                             p.get("step_bytes", {}).get(k, [0, 0])[1] / w for p in passes)
        text.append(" / ".join(f"{wall[k]:.1f}:{disk(k):.1f}" for k in STEPS))
    return f"| {label} | " + " | ".join(text) + " |"


def table(title, rows):
    print(f"| {title} | " + " | ".join(COLUMNS) + " |")
    print("| --- |" + " ---: |" * len(COLUMNS))
    for r in rows:
        print(r)


def main():
    global RATES
    out = sys.argv[1]
    groups = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    if len(sys.argv) > 4:
        RATES = (float(sys.argv[3]), float(sys.argv[4]))
        COLUMNS.append("wall s : disk s by step: " + " / ".join(STEPS))
    passes = load(out)
    if not passes:
        print(f"{out}: no pipeline pass recorded")
        return
    by = {}
    for p in passes:
        by.setdefault(p["partition"], []).append(p)
    table("partition", [row(name, ps) for name, ps in by.items()])
    name, ps = max(by.items(), key=lambda kv: len(kv[1]))
    step = max(1, -(-len(ps) // groups))
    print()
    table(f"{name}: passes", [row(f"{g[0]['pass']}-{g[-1]['pass']}", g)
                              for g in (ps[i:i + step] for i in range(0, len(ps), step))])


if __name__ == "__main__":
    main()
