#!/usr/bin/python3
"""Runs Holistic Trace Analysis (HTA), from its sources, on traces.

usage: hta_check.py HTA_DIR ranks DIR
           prints the ranks TraceAnalysis loads from folder DIR, each as
           "RANK FILE" (the file's name), and the count of its events
       hta_check.py HTA_DIR backends TRACE
           prints "BACKEND EVENTS" for HTA's json, ijson and batched ijson
           parsers of TRACE (an exception fails)
       hta_check.py HTA_DIR analyses KINETO_DIR MXPROF_DIR
           runs each TraceAnalysis analysis on both folders and prints
           "ANALYSIS kineto=ok|error mxprof=ok|error" for each
       hta_check.py HTA_DIR steps DIR_A DIR_B|-
           prints the profiler steps of DIR_A ("steps N N ..."), the
           ranks get_potential_stragglers() names ("stragglers ..."),
           and the rows of TraceDiff.compare_traces() of DIR_A's and
           DIR_B's iterations 3 ("diff ROWS", then "op NAME COUNT_A
           COUNT_B" for each user annotation compared)
"""
import contextlib
import io
import logging
import os
import sys

sys.path.insert(0, sys.argv[1])
logging.disable(logging.CRITICAL)

from hta.common.trace_parser import parse_trace_dataframe  # noqa: E402
from hta.configs.parser_config import ParserBackend, ParserConfig  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402

# Those of TraceAnalysis's analyses that need no argument but the trace.
ANALYSES = [
    ("get_profiler_steps", {}),
    ("get_comm_comp_overlap", {"visualize": False}),
    ("get_gpu_kernel_breakdown", {"visualize": False}),
    ("get_temporal_breakdown", {"visualize": False}),
    ("get_idle_time_breakdown", {"visualize": False}),
    ("get_cuda_kernel_launch_stats", {"visualize": False}),
    ("get_queue_length_summary", {"ranks": None}),
    ("get_memory_bw_summary", {"ranks": None}),
    ("get_gpu_user_annotation_breakdown", {"visualize": False}),
    ("get_aten_op_kernels_and_delay", {}),
]


def quiet(fn, *a, **kw):
    with contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        return fn(*a, **kw)


def ranks(d):
    t = quiet(TraceAnalysis, trace_dir=d)
    for r in sorted(t.t.get_ranks()):
        f = os.path.basename(t.t.trace_files[r])
        print(r, f, len(t.t.get_trace(r)))


def backends(path):
    for b in (ParserBackend.JSON, ParserBackend.IJSON,
              ParserBackend.IJSON_BATCHED):
        cfg = ParserConfig(ParserConfig.get_default_cfg().get_args())
        cfg.set_parser_backend(b)
        _, df, _ = quiet(parse_trace_dataframe, path, cfg)
        print(b.name, len(df))


def analyses(kineto, mxprof):
    ts = {k: quiet(TraceAnalysis, trace_dir=d)
          for k, d in (("kineto", kineto), ("mxprof", mxprof))}
    for name, kw in ANALYSES:
        out = []
        for k, t in ts.items():
            try:
                quiet(getattr(t, name), **kw)
                out.append("%s=ok" % k)
            except Exception as e:  # noqa: BLE001 (any failure counts)
                out.append("%s=error(%s)" % (k, type(e).__name__))
        print(name, " ".join(out))


def steps(a, b):
    from hta.trace_diff import TraceDiff
    # HTA leaves out the last step unless told (a profiler's last step
    # is often cut short); every step of mxprof's trace is whole.
    t = quiet(TraceAnalysis, trace_dir=a, include_last_profiler_step=True)
    print("steps", " ".join(str(s) for s in quiet(t.get_profiler_steps)))
    try:
        print("stragglers", " ".join(str(r) for r in quiet(
            t.get_potential_stragglers, num_candidates=1)))
    except Exception as e:  # noqa: BLE001 (reported, compared by the test)
        print("stragglers error", type(e).__name__, e)
    if b == "-":
        return
    df = quiet(TraceDiff.compare_traces, a, b, control_iteration=3,
               test_iteration=3)
    print("diff", len(df))
    for name, row in df.iterrows():
        if not str(name).startswith("aten::"):
            print("op", name, int(row["Control_counts"]),
                  int(row["Test_counts"]))


cmd = sys.argv[2]
if cmd == "ranks":
    ranks(sys.argv[3])
elif cmd == "backends":
    backends(sys.argv[3])
elif cmd == "analyses":
    analyses(sys.argv[3], sys.argv[4])
elif cmd == "steps":
    steps(sys.argv[3], sys.argv[4])
else:
    sys.exit(__doc__)
