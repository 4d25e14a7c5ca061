"""Hooked calls made in a sub-interpreter, for
tests/integration/stack_subinterp.sh: zlib.crc32 with the GIL held and
sqlite3's step with it released, in a sub-interpreter run from the main
thread and from another thread, then zlib.crc32 in the main interpreter.
sqlite3 only before 3.12: CPython 3.12.1 aborts (double free) when a
sub-interpreter that imported it ends on a thread."""
import threading
import zlib

try:
    import _xxsubinterpreters as subs  # 3.9 to 3.12
except ImportError:
    import _interpreters as subs  # 3.13

CODE = """
import sys, zlib
def sub_leaf():
    return zlib.crc32(b"inside")
def sub_query(c):
    return c.execute("select 1").fetchall()
sub_leaf()
if sys.version_info < (3, 12):
    import sqlite3; sub_query(sqlite3.connect(":memory:"))
"""


def run_sub():
    interp = subs.create()
    subs.run_string(interp, CODE)
    subs.destroy(interp)


def main_leaf():
    return zlib.crc32(b"outside")


run_sub()
t = threading.Thread(target=run_sub)
t.start()
t.join()
print(main_leaf())
