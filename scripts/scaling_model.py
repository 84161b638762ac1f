#!/usr/bin/env python3
"""docs/SCALING.md's model beside measured builds by N members on one host.

Usage: scaling_model.py N1 LOG1 WALL1 [N2 LOG2 WALL2 ...]
(N: members; LOG: rank 0's build-log.json; WALL: the command's seconds).
N = 1 must be among them: it gives the work. The model (docs/SCALING.md):

  T(N) = T(1) / min(1, cores(N) / cores(1))            the split work
       + calls(N) * LATENCY                            one per collective
       + bytes(N) / BANDWIDTH                          what a member receives
       + replicated(N)                                 work every member repeats

On one host N ranks of C/N threads keep the C cores busy, so the split work
takes T(1). calls(N) is what the build calls (the same for every N > 1:
per partition a few, and a few per pass); bytes(N) grows as (N-1)/N of the
values a partition exchanges. Both are taken from the smallest N > 1 run
and scaled. LATENCY is calibrated on that run (its seconds in collectives,
less its bytes at BANDWIDTH, per collective): it holds the wait for the
slowest member, which no constant of the transport predicts. The larger
runs are then predicted.
"""
import json
import sys

LATENCY_FLOOR = 100e-6  # s per collective among the ranks of one host, at least
BANDWIDTH = 2e9         # B/s a member receives through Open MPI's shared-memory transport

args = sys.argv[1:]
runs = sorted((int(args[i]), json.load(open(args[i + 1])), float(args[i + 2])) for i in range(0, len(args), 3))
if not runs or runs[0][0] != 1:
    sys.exit("scaling_model.py: the N = 1 run is needed")
t1 = runs[0][2]
split = [r for r in runs if r[0] > 1]
if split:
    ref_n, ref, _ = split[0]
    calls = ref["communication"]["calls"]
    ref_bytes = ref["communication"]["bytes_received"]
    LATENCY = max(LATENCY_FLOOR, (ref["communication"]["seconds"] - ref_bytes / BANDWIDTH) / max(calls, 1))
    print(f"(latency per collective calibrated on -np {ref_n}: {LATENCY * 1e3:.2f} ms; bandwidth {BANDWIDTH / 1e9:.0f} GB/s stated)")
print("| ranks | measured s | predicted s | error | collectives | MB received (rank 0) | comm s measured | comm s predicted |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
print(f"| 1 | {t1:.2f} | {t1:.2f} | 0% | 0 | 0 | 0 | 0 |")
if split:
    for n, log, wall in split:
        c = log["communication"]
        received = ref_bytes * ((n - 1) / n) / ((ref_n - 1) / ref_n)
        comm = calls * LATENCY + received / BANDWIDTH
        pred = t1 + comm
        err = (pred - wall) / wall * 100
        note = " (calibration)" if n == ref_n else ""
        print(f"| {n}{note} | {wall:.2f} | {pred:.2f} | {err:+.0f}% | {c['calls']} | {c['bytes_received'] / 1e6:.1f} | {c['seconds']:.2f} | {comm:.2f} |")
