# tn_hang.py - for flight_hang: some zlib.crc32 calls (hooked), then the
# main thread stuck in queue.get() for good, a worker thread asleep;
# argv[1] is created once both wait.
import queue
import sys
import threading
import time
import zlib


def worker():
    time.sleep(3600)


def main():
    for i in range(100):
        zlib.crc32(b"x" * i)
    q = queue.Queue()
    threading.Thread(target=worker, name="sleeper", daemon=True).start()
    open(sys.argv[1], "w").close()
    q.get()


main()
