"""mxprof.profiler: the names and semantics of mxnet.profiler, backed by
libmxprof.so through ctypes.

Functions: set_config, set_state, pause, resume, dump, dumps, scope, and the
deprecated profiler_set_config, profiler_set_state and dump_profile.
Classes: Domain, Task, Frame, Event, Counter, Marker, and Profiler
(MindSpore's start/stop/analyse over the same profiler).

Errors from the library come back as exceptions: ValueError for a bad key,
value, state, format, sort key or scope (EINVAL), OSError otherwise. The
library also prints one line on stderr for a bad setting, as it does for a
bad MXPROF_* variable.
"""

import contextlib
import ctypes
import errno
import json
import os
import threading

__all__ = [
    "set_config", "set_state", "pause", "resume", "dump", "dumps", "scope",
    "profiler_set_config", "profiler_set_state", "dump_profile",
    "Domain", "Task", "Frame", "Event", "Counter", "Marker", "dropped",
    "add_metadata", "add_metadata_json", "library_path", "Profiler",
]

_SYMBOL = "mxprof_set_config"


def _candidates():
    """Yields the places to load the library from, in order. MXPROF_LIB,
    when set, is the only one: an explicit choice that fails is an error,
    not a reason to load some other build."""
    env = os.environ.get("MXPROF_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    # tools/python/mxprof/ in a checkout: the build is at the top.
    yield os.path.normpath(os.path.join(here, "..", "..", "..", "build",
                                        "libmxprof.so"))
    yield "libmxprof.so"


def _load():
    """Returns (CDLL, path): the injected library, or one loaded now."""
    try:
        main = ctypes.CDLL(None, use_errno=True)
        getattr(main, _SYMBOL)
        return main, "(preloaded)"
    except (OSError, AttributeError):
        pass
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL, use_errno=True)
            getattr(lib, _SYMBOL)
            return lib, path
        except (OSError, AttributeError) as e:
            tried.append("%s (%s)" % (path, e))
    hint = " Set MXPROF_LIB to its path."
    if any("static TLS" in t for t in tried):
        # glibc keeps little room for initial-exec TLS in libraries loaded
        # after start; a preloaded library does not need it.
        hint = (" Preload it instead (LD_PRELOAD or `mxprof run`), or start "
                "Python with GLIBC_TUNABLES=glibc.rtld.optional_static_tls="
                "65536.")
    raise ImportError("mxprof: cannot load libmxprof.so; tried: " +
                      "; ".join(tried) + "." + hint)


_lib, library_path = _load()

_c = ctypes
_vp, _cp, _int, _i64 = _c.c_void_p, _c.c_char_p, _c.c_int, _c.c_int64


def _sig(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_set_config = _sig("mxprof_set_config", _int, _cp, _cp)
_set_state = _sig("mxprof_set_state", _int, _cp)
_pause = _sig("mxprof_pause", _int)
_resume = _sig("mxprof_resume", _int)
_dump = _sig("mxprof_dump", _int, _int)
_dumps = _sig("mxprof_dumps_limit", _vp, _int, _cp, _cp, _int, _c.c_uint)
_dump_steps = _sig("mxprof_dump_steps", _int, _int, _cp)
_dumps_steps = _sig("mxprof_dumps_steps", _vp, _int, _cp, _cp, _int,
                    _c.c_uint, _cp)
_add_metadata = _sig("mxprof_add_metadata", _int, _cp, _cp)
_add_metadata_json = _sig("mxprof_add_metadata_json", _int, _cp, _cp)
_free = _sig("mxprof_free", None, _vp)
_dropped = _sig("mxprof_dropped", _c.c_uint64)
_domain_create = _sig("mxprof_domain_create", _vp, _cp)
_task_create = _sig("mxprof_task_create", _vp, _vp, _cp)
_task_start = _sig("mxprof_task_start", None, _vp)
_task_stop = _sig("mxprof_task_stop", None, _vp)
_task_destroy = _sig("mxprof_task_destroy", None, _vp)
_frame_create = _sig("mxprof_frame_create", _vp, _vp, _cp)
_frame_start = _sig("mxprof_frame_start", None, _vp)
_frame_stop = _sig("mxprof_frame_stop", None, _vp)
_frame_destroy = _sig("mxprof_frame_destroy", None, _vp)
_event_create = _sig("mxprof_event_create", _vp, _cp)
_event_start = _sig("mxprof_event_start", None, _vp)
_event_stop = _sig("mxprof_event_stop", None, _vp)
_event_destroy = _sig("mxprof_event_destroy", None, _vp)
_counter_create = _sig("mxprof_counter_create", _vp, _vp, _cp, _i64)
_counter_set = _sig("mxprof_counter_set", None, _vp, _i64)
_counter_inc = _sig("mxprof_counter_increment", None, _vp, _i64)
_counter_dec = _sig("mxprof_counter_decrement", None, _vp, _i64)
_counter_destroy = _sig("mxprof_counter_destroy", None, _vp)
_marker_create = _sig("mxprof_marker_create", _vp, _vp, _cp)
_marker_mark = _sig("mxprof_marker_mark", _int, _vp, _cp)
_marker_destroy = _sig("mxprof_marker_destroy", None, _vp)


def _b(s):
    return s.encode() if isinstance(s, str) else bytes(s)


def _check(rc, what):
    """Turns a negative errno from the library into an exception."""
    if rc is None or rc >= 0:
        return rc
    err = -rc
    msg = "%s: %s" % (what, os.strerror(err))
    if err == errno.EINVAL:
        raise ValueError(msg)
    raise OSError(err, msg)


def _handle(h, what):
    if not h:
        err = ctypes.get_errno() or errno.ENOMEM
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))
    return h


def _worker_only(profile_process):
    if profile_process != "worker":
        raise ValueError("profile_process=%r: only 'worker' is supported "
                         "(there is no kvstore server here)" % (profile_process,))


def _config_value(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def set_config(**kwargs):
    """Sets profiler settings by keyword, as mxnet.profiler.set_config:
    filename, profile_all, profile_symbolic, profile_imperative,
    profile_memory, profile_api, continuous_dump, dump_period,
    aggregate_stats, max_trace_mb, and flight mode's flight ("120s",
    "20steps" or "off"), trigger ("slow:3x,hang:60s" or "none"),
    flight_mb and flight_max_dumps, which must come before recording
    starts (RuntimeError after). Booleans become "1" and "0". filename
    names the files of the next dump, also after recording began (one line
    on stderr then). profile_api turns the timing of hooked C API calls
    off and on, profile_memory the recording of device allocations,
    profile_all both; the other profile_* keys change nothing (see
    include/mxprof.h). Raises ValueError for a key or value the
    library rejects."""
    _worker_only(kwargs.pop("profile_process", "worker"))
    for key, value in kwargs.items():
        rc = _set_config(_b(key), _b(_config_value(value)))
        if rc == -errno.EBUSY and key in _BEFORE_START:
            raise RuntimeError(
                "set_config(%s=%r): flight mode is chosen before recording "
                "starts (call set_config before set_state('run'), or set "
                "MXPROF_FLIGHT and MXPROF_TRIGGER); recording has started"
                % (key, value))
        _check(rc, "set_config(%s=%r)" % (key, value))


# The keys the library takes only before recording starts.
_BEFORE_START = ("flight", "trigger", "flight_mb", "flight_max_dumps")


def set_state(state="stop", profile_process="worker"):
    """Sets the profiler state to 'run' or 'stop'."""
    _worker_only(profile_process)
    _check(_set_state(_b(state)), "set_state(%r)" % (state,))


def pause(profile_process="worker"):
    """Pauses recording without leaving the run state."""
    _worker_only(profile_process)
    _check(_pause(), "pause")


def resume(profile_process="worker"):
    """Resumes paused recording."""
    _worker_only(profile_process)
    _check(_resume(), "resume")


def _steps_arg(steps, what):
    """The bytes of a steps= argument (None: every step), as `mxprof
    report --steps LIST` takes it: a string such as "5,10-12"."""
    if steps is None:
        return None
    if not isinstance(steps, str):
        raise ValueError("%s(steps=%r): a string of step numbers and "
                         "ranges, such as \"5,10-12\"" % (what, steps))
    return _b(steps)


def _steps_form_ok(steps):
    """Whether steps looks like a list the library takes, only to tell
    its EINVAL for the list from the one for dumps()'s format or sort
    key: the library decides what it takes."""
    items = steps.split(",")
    for item in items:
        lo, _, hi = item.partition("-")
        if not lo.isdigit() or (hi and (not hi.isdigit() or
                                        int(hi) < int(lo))):
            return False
    return len(items) <= 64


def _steps_error(err, what, steps):
    """The exception for errno err of dump(steps=) or dumps(steps=), or
    None when err is not one of the step list's."""
    if err == errno.EINVAL:
        return ValueError("%s(steps=%r): not a list of steps (step numbers "
                          "and ranges, such as \"5,10-12\", at most 64)"
                          % (what, steps))
    if err == errno.ENODATA:
        return ValueError("%s(steps=%r): none of these steps was recorded"
                          % (what, steps))
    if err == errno.ENOTSUP:
        return ValueError("%s(steps=%r): not in flight mode, whose window "
                          "holds only the last steps" % (what, steps))
    return None


def dump(finished=True, profile_process="worker", steps=None):
    """Writes the trace and the tables beside it now. With finished=True
    the profiler stops and nothing more is written at exit, unless
    set_state('run') comes later: that records again, and the exit
    rewrites both files with everything since the start. With a step
    window (MXPROF_STEPS) both hold the window's steps only. steps, a
    list as `mxprof report --steps` takes it ("5,10-12"), keeps only
    those steps of what was recorded: their ProfilerStep#N slices and the
    events that began inside them; the tables then hold the host's
    sections (not the GPU's). ValueError for a bad list or one with no
    step recorded, and nothing is written."""
    _worker_only(profile_process)
    s = _steps_arg(steps, "dump")
    if s is None:
        _check(_dump(1 if finished else 0), "dump")
        return
    rc = _dump_steps(1 if finished else 0, s)
    e = _steps_error(-rc, "dump", steps) if rc < 0 else None
    if e:
        raise e
    _check(rc, "dump")


def dumps(reset=False, format="table", sort_by="total", ascending=False,
          row_limit=0, steps=None):
    """Returns the aggregate tables as a string ('table', 'json' or 'csv'
    format), rows sorted by 'total', 'avg', 'min', 'max', 'count' or 'self'
    (self time); PyTorch's table() keys cpu_time_total, cpu_time and
    self_cpu_time_total (and their cuda_ and device_ forms) sort by total,
    avg and self. Every format carries the GPU sections too. reset
    clears every table afterwards, the GPU tables included, for the next
    dumps() (the trace and .stats.txt still cover the whole run). row_limit, when
    not 0, keeps at most that many rows per section, as `mxprof report
    --top N` does (PyTorch's table(row_limit=N)); a Total row still covers
    all of them. With steps, a Steps section; with a step window
    (MXPROF_STEPS), the tables hold the window's steps only. steps= keeps
    only some steps of what was recorded, as dump(steps=) does."""
    if isinstance(row_limit, bool) or not isinstance(row_limit, int) or \
            row_limit < 0 or row_limit > 0xffffffff:
        raise ValueError("dumps(row_limit=%r): a whole number >= 0"
                         % (row_limit,))
    s = _steps_arg(steps, "dumps")
    ctypes.set_errno(0)
    if s is None:
        p = _dumps(1 if reset else 0, _b(format), _b(sort_by),
                   1 if ascending else 0, row_limit)
    else:
        p = _dumps_steps(1 if reset else 0, _b(format), _b(sort_by),
                         1 if ascending else 0, row_limit, s)
    if not p:
        err = ctypes.get_errno() or errno.ENOMEM
        e = _steps_error(err, "dumps", steps) if s is not None else None
        if e and not (err == errno.EINVAL and _steps_form_ok(steps)):
            raise e
        msg = "dumps(format=%r, sort_by=%r): %s" % (format, sort_by,
                                                    os.strerror(err))
        if err == errno.EINVAL:
            raise ValueError(msg)
        raise OSError(err, msg)
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        _free(p)


def add_metadata(key, value):
    """Adds key = value to the trace's top level and the head of the tables
    from the next dump on, as PyTorch's profiler add_metadata(key, value).
    Both are strings (value is passed through str()). Raises ValueError
    for an empty key or one the trace's top level uses."""
    _check(_add_metadata(_b(key), _b(str(value))),
           "add_metadata(%r)" % (key,))


def add_metadata_json(key, value):
    """Adds key with value, a JSON text, to the trace's top level as JSON
    (an object, list, number, ...), as MindSpore's Profiler
    add_metadata_json(key, value); a JSON string is added as
    add_metadata() adds it. Raises ValueError when value is not JSON text,
    or for a key add_metadata() refuses."""
    try:
        v = json.loads(value)
    except (TypeError, ValueError) as e:
        raise ValueError("add_metadata_json(%r): not JSON text: %s"
                         % (key, e))
    if isinstance(v, str):
        add_metadata(key, v)
        return
    text = json.dumps(v, separators=(",", ":"), allow_nan=False)
    _check(_add_metadata_json(_b(key), _b(text)),
           "add_metadata_json(%r)" % (key,))


def dropped():
    """Returns how many records were dropped because a buffer was full."""
    return int(_dropped())


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Deprecated form of set_config (as in MXNet)."""
    if mode == "all":
        set_config(profile_all=True, filename=filename)
    else:
        set_config(profile_symbolic=True, filename=filename)


def profiler_set_state(state="stop"):
    """Deprecated form of set_state (as in MXNet)."""
    set_state(state)


def dump_profile():
    """Deprecated form of dump(finished=True) (as in MXNet)."""
    dump(True)


class Domain(object):
    """A profiling domain: groups tasks, frames, counters and markers into
    one section of the tables. Domains are never destroyed."""

    def __init__(self, name):
        self.name = name
        self.handle = _handle(_domain_create(_b(name)), "Domain(%r)" % name)

    def __str__(self):
        return self.name

    def new_task(self, name):
        """Returns a new Task of this domain."""
        return Task(self, name)

    def new_frame(self, name):
        """Returns a new Frame of this domain."""
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """Returns a new Counter of this domain."""
        return Counter(self, name, value)

    def new_marker(self, name):
        """Returns a new Marker of this domain."""
        return Marker(self, name)


class _Range(object):
    """Shared start/stop and context-manager behaviour."""

    _start = _stop = _destroy = None

    def start(self):
        """Starts timing this object."""
        type(self)._start(self.handle)

    def stop(self):
        """Stops timing this object."""
        type(self)._stop(self.handle)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        destroy = type(self)._destroy
        if h and destroy is not None:
            try:
                destroy(h)
            except Exception:  # interpreter shutdown
                pass

    def __str__(self):
        return self.name


class Task(_Range):
    """A named unit of work on one thread; all passes aggregate into one
    row."""

    _start = staticmethod(_task_start)
    _stop = staticmethod(_task_stop)
    _destroy = staticmethod(_task_destroy)

    def __init__(self, domain, name):
        self.name, self.domain = name, domain
        self.handle = _handle(_task_create(domain.handle, _b(name)),
                              "Task(%r)" % name)


class Frame(_Range):
    """Like a Task, but each pass is numbered in the trace."""

    _start = staticmethod(_frame_start)
    _stop = staticmethod(_frame_stop)
    _destroy = staticmethod(_frame_destroy)

    def __init__(self, domain, name):
        self.name, self.domain = name, domain
        self.handle = _handle(_frame_create(domain.handle, _b(name)),
                              "Frame(%r)" % name)


class Event(_Range):
    """A per-thread range without a domain."""

    _start = staticmethod(_event_start)
    _stop = staticmethod(_event_stop)
    _destroy = staticmethod(_event_destroy)

    def __init__(self, name):
        self.name = name
        self.handle = _handle(_event_create(_b(name)), "Event(%r)" % name)


class Counter(object):
    """A value tracked over time. Supports ``c += n`` and ``c -= n``."""

    def __init__(self, domain, name, value=None):
        self.name, self.domain = name, domain
        # As in MXNet, an initial value is the counter's first sample; as
        # in the C API, 0 (the value a counter starts from) records none.
        self.handle = _handle(_counter_create(domain.handle, _b(name),
                                              int(value or 0)),
                              "Counter(%r)" % name)

    def set_value(self, value):
        """Sets the counter to value."""
        _counter_set(self.handle, int(value))

    def increment(self, delta=1):
        """Adds delta to the counter."""
        _counter_inc(self.handle, int(delta))

    def decrement(self, delta=1):
        """Subtracts delta from the counter."""
        _counter_dec(self.handle, int(delta))

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        if h:
            try:
                _counter_destroy(h)
            except Exception:
                pass


class Marker(object):
    """An instant in time."""

    def __init__(self, domain, name):
        self.name, self.domain = name, domain
        self.handle = _handle(_marker_create(domain.handle, _b(name)),
                              "Marker(%r)" % name)

    def mark(self, scope="process"):
        """Records the instant; scope is 'global', 'process' or 'thread'
        ('g', 'p', 't' too), or MXNet's 'task' and 'marker' (written with
        process scope, as MXNet does). Raises ValueError for another
        scope."""
        _check(_marker_mark(self.handle, _b(scope)),
               "Marker(%r).mark(scope=%r)" % (self.name, scope))

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        if h:
            try:
                _marker_destroy(h)
            except Exception:
                pass


_scope_state = threading.local()


@contextlib.contextmanager
def scope(name="<unk>:", append_mode=True):
    """Names a region of the program, as mxnet.profiler.scope does for its
    memory profiler. Here the region is recorded as an Event called by the
    full scope name; with append_mode the enclosing scope's name comes
    first."""
    stack = getattr(_scope_state, "stack", None)
    if stack is None:
        stack = _scope_state.stack = []
    full = (stack[-1] + name) if (append_mode and stack) else name
    stack.append(full)
    ev = Event(full)
    ev.start()
    try:
        yield
    finally:
        ev.stop()
        stack.pop()


class Profiler(object):
    """MindSpore's Profiler over this profiler: output_path is a folder
    (made when missing) that gets profile.json and profile.stats.txt;
    start_profile=False waits for start(). start() while started and
    stop() while stopped raise RuntimeError, as in MindSpore. analyse()
    writes the trace and tables. Other MindSpore arguments are accepted
    and change nothing."""

    def __init__(self, output_path="./data", start_profile=True, **kwargs):
        self.output_path = os.path.abspath(output_path)
        os.makedirs(self.output_path, exist_ok=True)
        set_config(filename=self.output_path)
        self._started = False
        if start_profile:
            self.start()

    def start(self):
        """Starts recording; RuntimeError when already started."""
        if self._started:
            raise RuntimeError("Profiler: already started")
        set_state("run")
        self._started = True

    def stop(self):
        """Stops recording; RuntimeError when not started."""
        if not self._started:
            raise RuntimeError("Profiler: not started")
        set_state("stop")
        self._started = False

    def analyse(self, **kwargs):
        """Stops recording and writes the trace and tables into
        output_path."""
        if self._started:
            self.stop()
        dump(True)

    def add_metadata(self, key, value):
        """add_metadata(key, value) of this module."""
        add_metadata(key, value)

    def add_metadata_json(self, key, value):
        """add_metadata_json(key, value) of this module."""
        add_metadata_json(key, value)
