# Driven by python_frames.sh: captures this thread's Python frames through
# libpyprobe.so (preload/pyframes.c) in several situations and prints what
# it saw, next to what CPython itself says (sys._getframe, co_lines).
# The lines marked "@name" are looked up by the shell script.
import ctypes, dis, os, sys, threading

LIB = sys.argv[1]
BUF = 1 << 16
cdll = ctypes.CDLL(LIB)  # the GIL is released around each call
pydll = ctypes.PyDLL(LIB)  # the GIL is held
for lib in (cdll, pydll):
    lib.pyprobe_stack.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.pyprobe_describe.argtypes = [ctypes.c_size_t, ctypes.c_uint,
                                     ctypes.c_char_p, ctypes.c_int,
                                     ctypes.c_char_p, ctypes.c_int]
    lib.pyprobe_bench.restype = ctypes.c_double
    lib.pyprobe_bench.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    lib.pyprobe_ctor.argtypes = [ctypes.c_char_p, ctypes.c_int]


def name_of(co):
    return getattr(co, "co_qualname", co.co_name)


def python_view(f):
    out = []
    while f is not None:
        co = f.f_code
        out.append("%s (%s:%d)" % (name_of(co),
                                   os.path.basename(co.co_filename),
                                   f.f_lineno))
        f = f.f_back
    return out


def report(tag, n, buf, want):
    lines = buf.value.decode().splitlines()
    frames = [l.split(" ", 1) for l in lines[:-1]]
    print("%s frames %d" % (tag, n))
    for e, name in frames:
        print("%s: %s" % (tag, name))
    print("%s entries: %s" % (tag, " ".join(e for e, name in frames)))
    print("%s %s, entries %d" % (tag, lines[-1],
                                 sum(int(e) for e, name in frames)))
    got = [name for e, name in frames]
    print("%s python %s" % (tag, "agrees" if got == want else
                            "differs: %r" % want))


def leaf_py(tag, lib, most):
    buf = ctypes.create_string_buffer(BUF)
    n = lib.pyprobe_stack(buf, BUF, most); want = python_view(sys._getframe())[:most]  # @leaf
    report(tag, n, buf, want)


def caller_py(tag, lib, most=64):
    leaf_py(tag, lib, most)  # @caller


print("probe", cdll.pyprobe_probe(), cdll.pyprobe_probe())
ctor = ctypes.create_string_buffer(64)
cdll.pyprobe_ctor(ctor, 64)
print("ctor", ctor.value.decode())
caller_py("cdll", cdll)  # @cdll
caller_py("pydll", pydll)  # @pydll
caller_py("max2", cdll, 2)  # @max2
list(map(caller_py, ["map"], [cdll]))  # @map
t = threading.Thread(target=caller_py, args=("thread", cdll))
t.start()
t.join()


# ---- the cost of a capture 32 frames deep (31 of rec, <module>)
def rec(n):
    if n:
        return rec(n - 1)
    depth = ctypes.c_int()
    ns = cdll.pyprobe_bench(100000, ctypes.byref(depth))
    return depth.value, ns


depth, ns = rec(30)
print("bench depth", depth)
print("bench ns %.1f" % ns)


# ---- describe: names of each str kind, cuts, garbage
def describe(addr, off=0, nlen=512, flen=1024):
    name = ctypes.create_string_buffer(max(nlen, 1))
    file = ctypes.create_string_buffer(max(flen, 1))
    rc = cdll.pyprobe_describe(addr, off, name, nlen, file, flen)
    return "%d [%s] [%s]" % (rc, name.value.decode(), file.value.decode())


def café_ünï(): return 1  # @kind1
def 函数(): return 2  # @kind2
def 𠀀𠀁(): return 4  # @kind4


for k, f in (("kind1", café_ünï), ("kind2", 函数), ("kind4", 𠀀𠀁)):
    print("desc %s %s" % (k, describe(id(f.__code__))))
g = {}
exec(compile("def g(): return 0\n", "/x/dé/文件_𠀀.py", "exec"), g)
print("desc file", describe(id(g["g"].__code__)))
print("desc cut5", describe(id(函数.__code__), nlen=5, flen=4))
print("desc cut7", describe(id(函数.__code__), nlen=7, flen=5))
print("desc cut1", describe(id(函数.__code__), nlen=1, flen=0))
print("desc int", describe(id(4242)))
print("desc bytes", describe(id(b"x" * 100)))
print("desc null", describe(0))
print("desc odd", describe(id(函数.__code__) + 1))


# ---- lines: every instruction offset of many code objects, against
# CPython's own table reader
def python_lines(co):
    if hasattr(co, "co_lines"):
        for start, end, line in co.co_lines():
            for off in range(start, end, 2):
                yield off, line
    else:
        starts = dict(dis.findlinestarts(co))
        line = co.co_firstlineno
        for off in range(0, len(co.co_code), 2):
            line = starts.get(off, line)
            yield off, line


def codes(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            yield from codes(c)


SRC = ("def spread(a, b):\n" + "\n" * 300 + "    x = (a +\n\n  b)\n"
       + "\n" * 130 + "    return [x,\n" + "        x] + [" + "a + " * 300
       + "b]\n"
       + "def back(a):\n    return (a\n        if a else\n    a +\n 1)\n")
checked = bad = 0
pool = [compile(SRC, "/synthetic/lines.py", "exec")]
pool += [compile(open(p).read(), p, "exec")
         for p in (__file__, threading.__file__, dis.__file__)]
for top in pool:
    for co in codes(top):
        for off, line in python_lines(co):
            want = "%s (%s%s)" % (name_of(co),
                                  os.path.basename(co.co_filename),
                                  "" if line is None else ":%d" % line)
            got = describe(id(co), off)
            checked += 1
            if got != "0 [%s] [%s]" % (want, co.co_filename):
                bad += 1
                if bad < 5:
                    print("line differs at %d: %s, want %s" % (off, got, want))
print("lines checked", "many" if checked > 5000 else checked)
print("lines differing", bad)


# ---- __del__: now (2 frames) and while the interpreter finalizes (none)
class AtDel:
    def __init__(self, lib, write):
        self.lib, self.write = lib, write
        self.buf = ctypes.create_string_buffer(BUF)

    def __del__(self):
        n = self.lib.pyprobe_stack(self.buf, BUF, 64)
        self.write(1, ("del frames %d\n" % n).encode())


keep = AtDel(cdll, os.write)
sys.stdout.flush()
now = AtDel(cdll, os.write)
del now
