"""One launch of tests/bench/torch_cpu_bench.sh: times a PyTorch CPU loop.

usage: torch_cpu_bench.py PROFILER STEPS SMALL

PROFILER: none, autograd (torch.autograd.profiler around everything
below) or autograd-stack (the same with with_stack=True). Under mxprof
it is none: mxprof comes in through LD_PRELOAD.

Every figure is a time per step or per call in one of two forms: its
1st percentile over the launch (p01: the fastest 1 % of the steps or
blocks) and its median. A VM's speed changes from moment to moment with
what else its host runs (on the 2-core test VM a fixed Python loop,
timed 20 times in one process by its CPU time, took 0.130 to 0.235 s),
which moves a launch's median step by 10 to 30 %; the fastest steps
are what the loop costs when nothing else slows it, and they move by
about 1 % from launch to launch.

Prints:
  train1 P01 MEDIAN WALL OTHER
                     the training loop of tests/programs/torch_train.py
                     (batches of 64) with torch.set_num_threads(1), STEPS
                     steps: the training thread's CPU time a step (p01,
                     median), the median step's wall time, and the CPU
                     time of the process's other threads (a profiler's
                     own, OpenMP's) a step, all in ms;
  trainN P01 MEDIAN CPU MINE N
                     the same loop with torch.set_num_threads(N), N the
                     number of CPUs this process may run on: the step's
                     wall time (p01, median; the work is spread over N
                     threads, so a thread's CPU time says little), the
                     process's CPU time a step, and that of mxprof's own
                     threads (those named mxprof-*, by schedstat), in
                     ms. mxprof's drain thread runs a pass every 10 ms,
                     so the p01 step is one it did not interrupt; with
                     every core busy MINE is time the program's threads
                     did not get;
  small P01 MEDIAN   x.to(torch.float64) on a 16x16 float tensor (four
                     ATen operators: to, _to_copy, empty_strided,
                     copy_), one thread: the thread's CPU time in
                     microseconds a call, over 200 blocks of SMALL // 200
                     calls each, a third of them before the training
                     loops, a third between them and a third after.
Each phase has warm-up steps or calls of its own first.
"""
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 5 * 5, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(torch.flatten(x, 1))


def p01(xs):
    return sorted(xs)[len(xs) // 100]


def small_blocks(x, per, count, us):
    torch.set_num_threads(1)
    for _ in range(count):
        t = time.thread_time()
        for _ in range(per):
            x.to(torch.float64)
        us.append((time.thread_time() - t) * 1e6 / per)


def mine_ns():
    """CPU time (ns) of this process's threads named mxprof-*."""
    total = 0
    for t in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/comm" % t) as f:
                if not f.read().startswith("mxprof-"):
                    continue
            with open("/proc/self/task/%s/schedstat" % t) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def train(threads, steps, label):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(64, 1, 12, 12)
    y = torch.randint(0, 10, (64,))

    def step():
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()

    for _ in range(50):
        step()
    cpu, wall = [], []
    m0 = mine_ns()
    p0 = time.process_time()
    c0 = time.thread_time()
    for _ in range(steps):
        t = time.perf_counter()
        c = time.thread_time()
        step()
        cpu.append(time.thread_time() - c)
        wall.append(time.perf_counter() - t)
    mine = time.thread_time() - c0
    proc = time.process_time() - p0
    if label == "train1":
        out = (p01(cpu), statistics.median(cpu), statistics.median(wall),
               (proc - mine) / steps)
    else:
        out = (p01(wall), statistics.median(wall), proc / steps,
               (mine_ns() - m0) * 1e-9 / steps)
    print(label, " ".join("%.5f" % (v * 1e3) for v in out), threads)


def run(steps, n_small):
    # The small loop's blocks are timed in three parts, before, between
    # and after the training loops, so that they sample the machine over
    # the whole launch and not over one second of it.
    torch.set_num_threads(1)
    x = torch.randn(16, 16)
    for _ in range(2000):
        x.to(torch.float64)
    per = max(1, n_small // 200)
    us = []
    small_blocks(x, per, 67, us)
    train(1, steps, "train1")
    small_blocks(x, per, 67, us)
    train(len(os.sched_getaffinity(0)), steps, "trainN")
    small_blocks(x, per, 66, us)
    print("small %.4f %.4f" % (p01(us), statistics.median(us)))


def main():
    prof, steps, n_small = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if prof == "none":
        run(steps, n_small)
        return
    from torch.autograd import profiler

    with profiler.profile(with_stack=prof == "autograd-stack"):
        run(steps, n_small)
        # The profiler's exit turns every event of the run into Python
        # objects: minutes after 6000 steps, and not a cost of the steps.
        sys.stdout.flush()
        os._exit(0)


main()
