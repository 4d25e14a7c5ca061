#!/usr/bin/env python3
"""Writes a synthetic mxprof trace of about SIZE bytes, quickly.

usage: report_gen.py OUT SIZE [--truncate]

The trace has the layout the library writes: metadata, then a block of
spans ("X"), frames, instants ("i") and counters ("C") over a few domains,
repeated until the file reaches SIZE (suffixes k, M, G accepted), then the
closing "mxprof" object. The block is built once and written many times, so
that a multi-gigabyte file takes seconds. Its counts are printed as JSON on
stdout: {"blocks": B, "per_block": {"GROUP/NAME": n}, "bytes": size}.

--truncate stops in the middle of an event, as a crash would.
"""
import json
import sys


def parse_size(s):
    mult = {"k": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def block(pid, t0):
    """Returns (text, counts, duration_us) of one block starting at t0."""
    ev = []
    counts = {}
    t = t0
    for i in range(20):
        for name, group, dur in (("step", "demo", 2.5), ("load", "demo", 0.75),
                                 ("deflate", "C API (libz.so.1)", 1.125)):
            args = '{"group":"%s"}' % group
            ev.append('{"ph":"X","cat":"user_annotation","name":"%s","pid":%d,'
                      '"tid":%d,"ts":%.3f,"dur":%.3f,"args":%s}'
                      % (name, pid, pid, t, dur, args))
            counts["%s/%s" % (group, name)] = counts.get("%s/%s" % (group, name), 0) + 1
            t += dur + 0.25
    ev.append('{"ph":"X","cat":"user_annotation","name":"frame","pid":%d,"tid":%d,'
              '"ts":%.3f,"dur":4.000,"args":{"group":"demo","frame":1}}' % (pid, pid, t))
    counts["demo/frame"] = 1
    t += 5
    ev.append('{"ph":"i","cat":"user_annotation","name":"mark","pid":%d,"tid":%d,'
              '"ts":%.3f,"s":"p","args":{"group":"demo"}}' % (pid, pid, t))
    counts["demo/mark"] = 1
    ev.append('{"ph":"C","cat":"user_annotation","name":"queue","group":"demo",'
              '"pid":%d,"tid":%d,"ts":%.3f,"args":{"value":5}}' % (pid, pid, t))
    counts["demo/queue"] = 1
    t += 1
    return ",\n".join(ev), counts, t - t0


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: report_gen.py OUT SIZE [--truncate]")
    out, size = sys.argv[1], parse_size(sys.argv[2])
    truncate = "--truncate" in sys.argv[3:]
    pid = 4242
    head = ('{"schemaVersion":1,"displayTimeUnit":"ms",'
            '"baseTimeNanoseconds":1700000000000000000,"deviceProperties":[],\n'
            '"traceEvents":[\n'
            '{"ph":"M","name":"process_name","pid":%d,"tid":0,"args":{"name":"gen (pid %d)"}},\n'
            '{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":"main"}}'
            % (pid, pid, pid, pid))
    tail = ('\n],\n"mxprof":{"version":"0.1.0","pid":%d,"host":"gen",'
            '"droppedRecords":7,"timelineTruncated":false}}\n' % pid)
    # Timestamps grow from block to block; only the first block is formatted
    # by hand, the later ones reuse its text, so they repeat its times. Spans
    # still nest (each block is the same sequence), which is all the
    # aggregates need.
    text, counts, _ = block(pid, 10.0)
    text = ",\n" + text
    blocks = 0
    written = len(head)
    with open(out, "w") as f:
        f.write(head)
        chunk = text * 64
        while written + len(chunk) + len(tail) < size:
            f.write(chunk)
            written += len(chunk)
            blocks += 64
        while written + len(text) + len(tail) < size or blocks == 0:
            f.write(text)
            written += len(text)
            blocks += 1
        if truncate:
            f.write(text[: len(text) // 2])
            written += len(text) // 2
        else:
            f.write(tail)
            written += len(tail)
    json.dump({"blocks": blocks, "per_block": counts, "bytes": written}, sys.stdout)
    print()


main()
