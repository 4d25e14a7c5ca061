"""The diag/sum example of MXNet's profiling developer guide, with numpy in
place of mx.nd and each step wrapped in mxprof profiler objects.

usage: python_diag_sum.py MODE   (MODE: preloaded or imported)
Prints the dumps() tables; asserts the binding's behaviour on the way.
"""
import json
import os
import sys

import numpy as np

from mxprof import profiler

mode = sys.argv[1]
if mode == "preloaded":
    assert profiler.library_path == "(preloaded)", profiler.library_path
else:
    assert profiler.library_path == os.environ["MXPROF_LIB"], profiler.library_path

# configure the profiler
profiler.set_config(profile_all=True, aggregate_stats=True,
                    filename="trace_profile.json")
# start the profiler collecting data
profiler.set_state("run")

domain = profiler.Domain("example")
create = profiler.Task(domain, "create_data")
array = domain.new_task("array")
diag = profiler.Task(domain, "diag")
total = domain.new_task("sum")
iteration = domain.new_frame("iteration")
trace_value = domain.new_counter("trace_value")
ops = profiler.Counter(domain, "ops", value=1)
done = domain.new_marker("done")

results = []
for _ in range(3):
    with iteration:
        # 1. create our data
        with create:
            data = np.linspace(1, 9, 9).reshape((3, 3))
        # 2. create an array from it
        array.start()
        a = np.array(data)
        array.stop()
        # 3. compute on our data and produce results
        with diag:
            b = np.diag(a)
        with total:
            c = np.sum(b, -1)
        # 4. wait for computation to finish (numpy is synchronous)
        with profiler.Event("waitall"):
            results.append(float(c))
        trace_value.set_value(int(c))

ops += 4
ops -= 2
ops.increment()
ops.decrement(3)
done.mark()
with profiler.scope("outer:"):
    with profiler.scope("inner"):
        pass

# paused: nothing is recorded
profiler.pause()
with diag:
    pass
profiler.resume()

assert results == [15.0, 15.0, 15.0], results

for bad in (lambda: profiler.dumps(format="xml"),
            lambda: profiler.dumps(sort_by="median"),
            lambda: done.mark(scope="galaxy"),
            lambda: profiler.set_state("sprint")):
    try:
        bad()
    except ValueError:
        pass
    else:
        raise AssertionError("no ValueError")

# stop the profiler
profiler.set_state("stop")

js = json.loads(profiler.dumps(format="json"))
assert js["Time"]["example"]["diag"]["Total Count"] == 3, js["Time"]["example"]
by_count = profiler.dumps(sort_by="count", ascending=True)
assert by_count.index("\nouter: ") < by_count.index("\nwaitall "), by_count
by_count = profiler.dumps(sort_by="count")
assert by_count.index("\nwaitall ") < by_count.index("\nouter: "), by_count

# dump the profiling data as a string
print(profiler.dumps())
# dump the profiling data as a json file that can be viewed graphically
profiler.dump()
