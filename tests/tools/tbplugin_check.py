#!/usr/bin/python3
"""Loads a trace with the TensorBoard PyTorch Profiler plugin's loader
(pytorch/kineto's tb_plugin, from its sources), as its RunLoader loads
each worker's file, and prints what its views hold, one JSON line:

  {"views": [the views offered], "ops": {NAME: calls} (the Operator view,
   grouped by name), "with_stack": the operators with a call stack,
   "stacks": {NAME: [its call stacks]} (the call-stack view),
   "steps": [the Overview's step names], "dataloader_us": [each step's
   DataLoader time, us]}

usage: tbplugin_check.py TB_PLUGIN_DIR TRACE
(TRACE's name must end in .pt.trace.json, as the plugin wants.)
"""
import contextlib
import io
import json
import logging
import sys
import tempfile
import warnings

sys.path.insert(0, sys.argv[1])
warnings.simplefilter("ignore")
logging.disable(logging.CRITICAL)
with contextlib.redirect_stderr(io.StringIO()):
    from torch_tb_profiler.profiler.data import RunProfileData
    from torch_tb_profiler.profiler.overall_parser import ProfileRole
    from torch_tb_profiler.profiler.run_generator import RunGenerator

data = RunProfileData.parse("worker", None, sys.argv[2], tempfile.mkdtemp())
prof = RunGenerator("worker", None, data).generate_run_profile()
table = prof.operation_table_by_name["data"]
stacks = {name: [r["call_stack"] for r in t["data"]]
          for name, t in prof.operation_stack_by_name.items()}
print(json.dumps({
    "views": [v.name for v in prof.views],
    "ops": {r["name"]: r["calls"] for r in table},
    "with_stack": sorted(r["name"] for r in table if r["has_call_stack"]),
    "stacks": stacks,
    "steps": list(data.steps_names or []),
    "dataloader_us": [c.costs[ProfileRole.DataLoader]
                      for c in data.steps_costs or []],
}))
