"""mxprof for Python: MXNet's profiler API on top of libmxprof.so.

    from mxprof import profiler
    profiler.set_config(filename='trace.json', aggregate_stats=True)
    profiler.set_state('run')
    with profiler.Task(profiler.Domain('train'), 'step'):
        ...
    print(profiler.dumps())

The binding uses ctypes only. It finds the library already injected with
LD_PRELOAD (or ``mxprof run``) first; otherwise it loads $MXPROF_LIB, then
build/libmxprof.so of the checkout it lives in, then libmxprof.so from the
loader's search path.
"""

__version__ = "0.1.0"
__all__ = ["profiler"]
