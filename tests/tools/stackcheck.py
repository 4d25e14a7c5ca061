#!/usr/bin/env python3
"""Prints the call stacks of a trace's events, for tests to assert on.

usage: stackcheck.py TRACE [DEPTH] [CATEGORY]

Checks that "stackFrames" comes after traceEvents, is an object of frames with "name" and
"category", whose "parent" names another frame, and that every event's
"sf" names a frame (exit status 1 and one line on stderr otherwise).
Prints, sorted, one line per distinct (pid != main?, event, stack):

  COUNT NAME <- FRAME <- FRAME ...

with the event's name and its frames innermost first, each as
"name [category]", at most DEPTH frames (default all; 0 for all), only
those of CATEGORY when given (python: the Python frames alone).
"""
import collections
import gzip
import json
import sys


def main():
    path = sys.argv[1]
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    only = sys.argv[3] if len(sys.argv) > 3 else None
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    frames = d.get("stackFrames", {})
    if not isinstance(frames, dict):
        sys.exit("stackFrames is not an object")
    keys = list(d)
    if frames and keys.index("stackFrames") < keys.index("traceEvents"):
        # HTA's streaming reader recurses once for each member before
        # traceEvents and overflows Python's stack on a big stackFrames.
        sys.exit("stackFrames comes before traceEvents")
    for k, fr in frames.items():
        if "name" not in fr or "category" not in fr:
            sys.exit("frame %s has no name or category" % k)
        if "parent" in fr and fr["parent"] not in frames:
            sys.exit("frame %s names a parent %s that is not there"
                     % (k, fr["parent"]))
    lines = collections.Counter()
    for e in d["traceEvents"]:
        if "sf" not in e:
            continue
        sf = str(e["sf"])
        if sf not in frames:
            sys.exit("event %s names frame %s that is not there"
                     % (e.get("name"), sf))
        chain = []
        while sf is not None and (not depth or len(chain) < depth):
            fr = frames[sf]
            if only is None or fr["category"] == only:
                chain.append("%s [%s]" % (fr["name"], fr["category"]))
            sf = fr.get("parent")
        lines[" <- ".join([e["name"]] + chain)] += 1
    for line, n in sorted(lines.items()):
        print(n, line)


main()
