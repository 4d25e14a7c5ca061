# stack_script.py - known Python call chains down to hooked C calls, for
# tests/integration/stack_python.sh. The line numbers are asserted there.
import sqlite3
import zlib


def leaf_py(b):
    return zlib.crc32(b)


def caller_py():
    s = 0
    for i in range(3):
        s ^= leaf_py(b"abc" * (i + 1))
    return s


def query(db):
    return db.execute("select 1 + 1").fetchall()


print(caller_py())
print(query(sqlite3.connect(":memory:")))


def two_lines():
    s = 0
    for i in range(4):
        if i & 1:
            s ^= zlib.crc32(b"a")
        else:
            s ^= zlib.crc32(b"b")
    return s


print(two_lines())
