#!/usr/bin/env python3
"""Writes a synthetic mxprof trace of a training loop of about SIZE bytes.

usage: html_gen.py OUT SIZE

The trace has what mxprof report --html draws: call stacks (stackFrames and
"sf"), one ProfilerStep#N slice (section "Steps") per step on the main
thread around about 300 PyTorch operators, each with a nested one, a GPU
kernel per linear layer on a stream, and a data-loading annotation per step
on a worker thread. Every 50th step is three times as slow. Steps are
written until the file reaches SIZE (suffixes k, M, G accepted); their
count and the size are printed as JSON on stdout.
"""
import json
import sys

PID = 4242
FRAMES = [  # id, name, parent, user
    (1, "<module> (train.py:200)", None, 1),
    (2, "main (train.py:180)", 1, 1),
    (3, "train_step (train.py:120)", 2, 1),
    (4, "Model.forward (model.py:40)", 3, 1),
    (5, "Linear.forward (linear.py:114)", 4, 0),
    (6, "ReLU.forward (activation.py:102)", 4, 0),
    (7, "Conv2d.forward (conv.py:460)", 4, 0),
    (8, "Tensor.backward (_tensor.py:488)", 3, 0),
    (9, "backward (__init__.py:197)", 8, 0),
    (10, "SGD.step (sgd.py:150)", 3, 0),
]
OPS = [  # parent, child, sf, dur (us), kernel
    ("aten::linear", "aten::addmm", 5, 12.0, "sgemm_kernel"),
    ("aten::relu", "aten::clamp_min", 6, 3.0, None),
    ("aten::conv2d", "aten::convolution", 7, 20.0, "implicit_gemm"),
    ("aten::linear", "aten::addmm", 5, 12.0, "sgemm_kernel"),
    ("AddmmBackward0", "aten::mm", 9, 15.0, "sgemm_kernel"),
    ("aten::add_", "aten::add_", 10, 2.0, None),
]


def parse_size(s):
    mult = {"k": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1]]) if s[-1] in mult else int(s)


def x(name, group, tid, ts, dur, sf=None, cat="cpu_op"):
    return ('{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%.3f,'
            '"dur":%.3f,%s"args":{"group":"%s"}}'
            % (cat, name, PID, tid, ts, dur,
               '"sf":%d,' % sf if sf else "", group))


def step(n, t0):
    """Returns the text of step n from t0 (us), and its end."""
    ev = []
    slow = 3.0 if n % 50 == 49 else 1.0
    t = t0 + 1
    ev.append(x("enumerate(DataLoader)#__next__", "torch annotations",
                PID + 1, t0, 30.0, cat="user_annotation"))
    for i in range(300):
        parent, child, sf, dur, kernel = OPS[i % len(OPS)]
        dur *= slow
        ev.append(x(child, "aten", PID, t + 0.5, dur - 1, sf))
        ev.append(x(parent, "aten", PID, t, dur, sf))
        if kernel:
            ev.append(x(kernel, "kernel", 7, t + 2, dur, cat="kernel"))
        t += dur + 0.5
    ev.append(x("ProfilerStep#%d" % n, "Steps", PID, t0, t - t0,
                cat="user_annotation"))
    return ",\n" + ",\n".join(ev), t + 5


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: html_gen.py OUT SIZE")
    out, size = sys.argv[1], parse_size(sys.argv[2])
    frames = ",\n".join(
        '"%d":{"name":"%s","category":"python"%s%s}'
        % (i, name, ',"parent":"%d"' % p if p else "", ',"user":1' if u else "")
        for i, name, p, u in FRAMES)
    head = ('{"schemaVersion":1,"displayTimeUnit":"ns",'
            '"baseTimeNanoseconds":1700000000000000000,"deviceProperties":[],\n'
            '"stackFrames":{\n%s},\n"traceEvents":[\n'
            '{"ph":"M","name":"process_name","pid":%d,"tid":0,"args":{"name":"python3"}},\n'
            '{"ph":"M","name":"process_labels","pid":%d,"tid":0,"args":{"labels":"python3 train.py"}},\n'
            '{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":"python3"}},\n'
            '{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":"worker"}},\n'
            '{"ph":"M","name":"thread_name","pid":%d,"tid":7,"args":{"name":"stream 7"}}'
            % (frames, PID, PID, PID, PID, PID, PID + 1, PID))
    tail = ('\n],\n"mxprof":{"version":"0.1.0","pid":%d,"host":"gen",'
            '"droppedRecords":0,"timelineTruncated":false}}\n' % PID)
    written, n, t = len(head), 0, 10.0
    with open(out, "w") as f:
        f.write(head)
        while True:
            text, t2 = step(n, t)
            if written + len(text) + len(tail) >= size and n:
                break
            f.write(text)
            written += len(text)
            n, t = n + 1, t2
        f.write(tail)
        written += len(tail)
    json.dump({"steps": n, "bytes": written}, sys.stdout)
    print()


main()
