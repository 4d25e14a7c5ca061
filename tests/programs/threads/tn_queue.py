# tn_queue.py - for threads_now_py: the main thread stuck in queue.get(),
# a worker thread in time.sleep; argv[1] is created once both run.
import queue
import sys
import threading
import time


def worker():
    time.sleep(3600)


def main():
    q = queue.Queue()
    threading.Thread(target=worker, name="sleeper", daemon=True).start()
    open(sys.argv[1], "w").close()
    q.get()


main()
