#!/usr/bin/env python3
"""What a flight-mode file holds, for the flight tests.

usage: flightcheck.py trace TRACE    one JSON object:
  {"steps": [N, ...],         # ProfilerStep#N slices, in N order
   "flight": {...},           # the metadata "flight" ({} if none)
   "meta": "32-41",           # the metadata "steps" ("" if none)
   "before": n,               # slices that begin before the first step
   "after": n,                # slices that begin after the last step ends
   "names": {"NAME": n},      # slices by name
   "inside": {"N": {"NAME": n}}}  # slices of step N's thread inside it

       flightcheck.py tables STATS   "SECTION<TAB>NAME<TAB>COUNT" for
  every row of the tables but the Metadata and Steps sections, sorted.
"""
import bisect
import collections
import json
import sys


def trace(path):
    d = json.load(open(path))
    ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    steps = sorted((e for e in ev if e["name"].startswith("ProfilerStep#")),
                   key=lambda e: int(e["name"].split("#")[1]))
    out = {"steps": [int(e["name"].split("#")[1]) for e in steps],
           "flight": d.get("flight", {}), "meta": d.get("steps", ""),
           "names": dict(collections.Counter(e["name"] for e in ev))}
    # Times are us with 3 decimals: compared within 1.5 ns.
    if steps:
        lo = min(e["ts"] for e in steps)
        hi = max(e["ts"] + e["dur"] for e in steps)
        out["before"] = sum(e["ts"] < lo - 0.0015 for e in ev)
        out["after"] = sum(e["ts"] > hi + 0.0015 for e in ev)
    # Each step's thread's other slices inside it, found by bisection.
    by_tid = collections.defaultdict(list)
    for e in ev:
        if not e["name"].startswith("ProfilerStep#"):
            by_tid[e["tid"]].append(e)
    starts = {}
    for tid, v in by_tid.items():
        v.sort(key=lambda e: e["ts"])
        starts[tid] = [e["ts"] for e in v]
    inside = {}
    for s in steps:
        v, ts = by_tid.get(s["tid"], []), starts.get(s["tid"], [])
        i = bisect.bisect_left(ts, s["ts"] - 0.0015)
        j = bisect.bisect_right(ts, s["ts"] + s["dur"] + 0.0015)
        c = collections.Counter(
            e["name"] for e in v[i:j]
            if e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 0.0015)
        inside[s["name"].split("#")[1]] = dict(c)
    out["inside"] = inside
    print(json.dumps(out, sort_keys=True))


def tables(path):
    rows, sec, prev = [], None, ""
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("====="):
            sec = prev
        elif not line:
            sec = None
        elif sec and sec not in ("Metadata", "Steps") and \
                not line.startswith(("Name ", "----")):
            # The numbers are the trailing fields; the count the first.
            f = line.split()
            num = lambda x: x.replace(".", "", 1).lstrip("-").isdigit()
            i = len(f)
            while i > 1 and num(f[i - 1]):
                i -= 1
            if i < len(f):
                rows.append("%s\t%s\t%s" % (sec, " ".join(f[:i]), f[i]))
        prev = line
    for r in sorted(rows):
        print(r)


{"trace": trace, "tables": tables}[sys.argv[1]](sys.argv[2])
