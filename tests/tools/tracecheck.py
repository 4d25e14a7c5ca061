#!/usr/bin/env python3
"""Validates an mxprof trace and prints a JSON summary for tests to assert on.

usage: tracecheck.py TRACE [--allow-truncated]

Checks, failing with exit status 1 and one line on stderr:
  - the file (plain or .gz) is a JSON object with a "traceEvents" list;
  - every event has ph, name, pid; ts is a number of microseconds;
  - "X" events have dur >= 0, and on every (pid, tid) they nest properly:
    two spans either do not overlap or one contains the other;
  - every (pid, tid) with events has a thread_name metadata event, and
    every pid a process_name.

Prints one JSON object:
  {"events": N,
   "ph": {"X": n, ...},
   "spans": {"GROUP/NAME": n},          # X events by args.group and name
   "instants": {"GROUP/NAME": n},
   "counters": {"GROUP/NAME": [values in time order]},
   "threads": {"TID": {"name": s, "spans": n}},
   "pids": [..], "process_names": {"PID": s},
   "max_depth": {"TID": d},
   "dropped": n, "top": {other top-level keys except traceEvents},
   "gpu": {"kernels": {NAME: n}, "memcpy": {NAME: [n, bytes]},
           "memset": {NAME: [n, bytes]}, "kernel_ns": total kernel ns,
           "device_events": n, "device_with_flow": n,
           "flows": {"s": n, "f": n, "pairs": n},
           "device_ext": {EXTERNAL_ID: n}, "host_ext": {"GROUP/NAME": n},
           "api": {"CAT/NAME": n}, "correlated_host": n}}
Flows are checked too: every "f" needs an "s" with the same id, and both
need cat "ac2g"; an "f" needs "bp": "e".
"""
import gzip
import json
import sys


def fail(msg):
    print("tracecheck: " + msg, file=sys.stderr)
    sys.exit(1)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: not a loadable trace: %s" % (path, e))


def gpu_summary(evs):
    """Summarises GPU events (Kineto categories) and launch flows."""
    dev_cats = ("kernel", "gpu_memcpy", "gpu_memset")
    g = {"kernels": {}, "memcpy": {}, "memset": {}, "kernel_ns": 0,
         "device_events": 0, "device_with_flow": 0,
         "flows": {"s": 0, "f": 0, "pairs": 0}, "device_ext": {},
         "host_ext": {}, "api": {}, "correlated_host": 0}
    starts, finishes = {}, {}
    for e in evs:
        ph, cat = e.get("ph"), e.get("cat")
        if ph in ("s", "f"):
            if cat != "ac2g":
                fail("flow event with cat %r: %r" % (cat, e))
            if ph == "f" and e.get("bp") != "e":
                fail("flow end without bp e: %r" % e)
            (starts if ph == "s" else finishes)[e.get("id")] = e
            g["flows"][ph] += 1
    for fid in finishes:
        if fid not in starts:
            fail("flow end %r has no start" % fid)
        if float(starts[fid]["ts"]) > float(finishes[fid]["ts"]):
            # A viewer that orders flow points by time drops it.
            fail("flow %r ends before it starts" % fid)
        g["flows"]["pairs"] += 1
    for e in evs:
        if e.get("ph") != "X":
            continue
        cat, args = e.get("cat"), e.get("args", {})
        if cat in dev_cats:
            g["device_events"] += 1
            if args.get("correlation") in finishes:
                g["device_with_flow"] += 1
            ext = args.get("External id")
            if ext is not None:
                g["device_ext"][str(ext)] = g["device_ext"].get(str(ext), 0) + 1
            if cat == "kernel":
                g["kernels"][e["name"]] = g["kernels"].get(e["name"], 0) + 1
                g["kernel_ns"] += round(e["dur"] * 1000)
            else:
                d = g["memcpy" if cat == "gpu_memcpy" else "memset"]
                c = d.setdefault(e["name"], [0, 0])
                c[0] += 1
                c[1] += args.get("bytes", 0)
        else:
            key = "%s/%s" % (args.get("group", ""), e["name"])
            if "External id" in args:
                g["host_ext"][key] = g["host_ext"].get(key, 0) + 1
            if cat in ("cuda_runtime", "cuda_driver", "cuda_sync"):
                k = "%s/%s" % (cat, e["name"])
                g["api"][k] = g["api"].get(k, 0) + 1
                if "correlation" in args:
                    g["correlated_host"] += 1
    return g


def main():
    if len(sys.argv) < 2:
        fail("usage: tracecheck.py TRACE")
    doc = load(sys.argv[1])
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("top level must be an object with a traceEvents list")
    evs = doc["traceEvents"]
    ph_count, spans, instants, counters = {}, {}, {}, {}
    threads, pnames, per_thread = {}, {}, {}
    pids = set()
    for e in evs:
        for k in ("ph", "name", "pid"):
            if k not in e:
                fail("event without %s: %r" % (k, e))
        ph = e["ph"]
        ph_count[ph] = ph_count.get(ph, 0) + 1
        pids.add(e["pid"])
        tid = str(e.get("tid", 0))
        if ph == "M":
            if e["name"] == "thread_name":
                threads.setdefault(tid, {"name": None, "spans": 0})
                threads[tid]["name"] = e["args"]["name"]
            elif e["name"] == "process_name":
                pnames[str(e["pid"])] = e["args"]["name"]
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)):
            fail("event without numeric ts: %r" % e)
        args = e.get("args", {})
        key = "%s/%s" % (args.get("group", e.get("group", "")), e["name"])
        if ph == "X":
            dur = e.get("dur")
            if not isinstance(dur, (int, float)) or dur < 0:
                fail("X event with bad dur: %r" % e)
            spans[key] = spans.get(key, 0) + 1
            # Compare in integer nanoseconds: ts and dur carry exactly
            # three decimals, and float sums would round differently.
            b_ns, d_ns = round(ts * 1000), round(dur * 1000)
            per_thread.setdefault((e["pid"], tid), []).append((b_ns, b_ns + d_ns, e["name"]))
        elif ph == "i" or ph == "I":
            instants[key] = instants.get(key, 0) + 1
        elif ph == "C":
            key = "%s/%s" % (e.get("group", ""), e["name"])
            counters.setdefault(key, []).append((ts, args.get("value")))
    gpu = gpu_summary(evs)
    depth = {}
    for (pid, tid), lst in per_thread.items():
        lst.sort(key=lambda s: (s[0], -s[1]))
        stack, maxd = [], 0
        for b, end, name in lst:
            while stack and stack[-1][1] <= b:
                stack.pop()
            if stack and end > stack[-1][1]:
                fail("spans overlap without nesting on tid %s: %s [%d,%d] vs %s [%d,%d] ns"
                     % (tid, name, b, end, stack[-1][2], stack[-1][0], stack[-1][1]))
            stack.append((b, end, name))
            maxd = max(maxd, len(stack))
        depth[tid] = maxd
        t = threads.setdefault(tid, {"name": None, "spans": 0})
        t["spans"] = len(lst)
        if t["name"] is None:
            fail("tid %s has events but no thread_name metadata" % tid)
    for pid in pids:
        if str(pid) not in pnames:
            fail("pid %s has no process_name metadata" % pid)
    top = {k: v for k, v in doc.items() if k != "traceEvents"}
    out = {
        "events": len(evs),
        "ph": ph_count,
        "spans": spans,
        "instants": instants,
        "counters": {k: [v for _, v in sorted(l, key=lambda x: x[0])] for k, l in counters.items()},
        "threads": threads,
        "pids": sorted(pids),
        "process_names": pnames,
        "max_depth": depth,
        "dropped": doc.get("mxprof", {}).get("droppedRecords"),
        "top": top,
        "gpu": gpu,
    }
    json.dump(out, sys.stdout, sort_keys=True)
    print()


main()
