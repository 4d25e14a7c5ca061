#!/usr/bin/env python3
"""Prints what a trace says of its steps, for the step tests.

usage: stepcheck.py TRACE

One JSON object:
  {"steps": [N, ...],            # ProfilerStep#N slices, in N order
   "cat": ["user_annotation"],   # their categories
   "tids": n,                    # threads they are on
   "contiguous": 1,              # each one starts where the one before
                                 # it (N - 1) ended, when there is one
   "first_at_first": 1,          # step 0 starts at the thread's first event
   "inside": {"N": {"NAME": n}}, # other slices of the thread inside step N
   "meta": "3-5"}                # the metadata "steps", "" if none
"""
import json
import sys

d = json.load(open(sys.argv[1]))
ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
steps = sorted((e for e in ev if e["name"].startswith("ProfilerStep#")),
               key=lambda e: int(e["name"].split("#")[1]))
nums = [int(e["name"].split("#")[1]) for e in steps]
out = {"steps": nums,
       "cat": sorted(set(e["cat"] for e in steps)),
       "tids": len(set(e["tid"] for e in steps)),
       "meta": d.get("steps", "")}
ok = 1
for a, b in zip(steps, steps[1:]):
    na, nb = int(a["name"].split("#")[1]), int(b["name"].split("#")[1])
    # Steps are apart by a few ns (STEP_MARGIN in collector/steps.c).
    if nb == na + 1 and not 0 < b["ts"] - (a["ts"] + a["dur"]) < 0.02:
        ok = 0
out["contiguous"] = ok
others = [e for e in ev if not e["name"].startswith("ProfilerStep#")]
if steps and nums[0] == 0:
    s0 = steps[0]
    mine = [e["ts"] for e in others if e["tid"] == s0["tid"]
            and e["ts"] <= s0["ts"] + s0["dur"]]
    out["first_at_first"] = int(bool(mine) and
                                abs(min(mine) - s0["ts"]) < 0.0015)
inside = {}
for s in steps:
    c = {}
    for e in others:
        if (e["tid"] == s["tid"] and e["ts"] >= s["ts"] - 0.0005 and
                e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 0.0005):
            c[e["name"]] = c.get(e["name"], 0) + 1
    inside[s["name"].split("#")[1]] = c
out["inside"] = inside
print(json.dumps(out, sort_keys=True))
