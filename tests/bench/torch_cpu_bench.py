"""One launch of tests/bench/torch_cpu_bench.sh: times a PyTorch CPU loop.

usage: torch_cpu_bench.py PROFILER STEPS SMALL

PROFILER: none, autograd (torch.autograd.profiler around everything
below) or autograd-stack (the same with with_stack=True). Under mxprof
it is none: mxprof comes in through LD_PRELOAD.

Prints, in this order:
  small US           the median over 15 blocks of SMALL // 15 calls of
                     x.to(torch.float64) on a 16x16 float tensor (four
                     ATen operators: to, _to_copy, empty_strided, copy_),
                     in microseconds a call, one thread;
  train1 WALL CPU    the training loop of tests/programs/torch_train.py
                     (batches of 64) with torch.set_num_threads(1):
                     the median step's wall time and the process's CPU
                     time (every thread's, time.process_time()) over
                     the STEPS steps divided by STEPS, both in ms;
  trainN WALL CPU N  the same with torch.set_num_threads(N), N the
                     number of CPUs this process may run on.
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


def small(n):
    torch.set_num_threads(1)
    x = torch.randn(16, 16)
    for _ in range(200):
        x.to(torch.float64)
    per = max(1, n // 15)
    us = []
    for _ in range(15):
        t = time.perf_counter()
        for _ in range(per):
            x.to(torch.float64)
        us.append((time.perf_counter() - t) * 1e6 / per)
    print("small %.4f" % statistics.median(us))


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

    for _ in range(20):
        step()
    times = []
    c0 = time.process_time()
    w0 = time.perf_counter()
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    wall = (time.perf_counter() - w0) / steps
    cpu = (time.process_time() - c0) / steps
    print(
        "%s %.5f %.5f %.5f %d"
        % (label, statistics.median(times) * 1e3, wall * 1e3, cpu * 1e3,
           threads)
    )


def run(steps, n_small):
    small(n_small)
    train(1, steps, "train1")
    train(len(os.sched_getaffinity(0)), steps, "trainN")


def main():
    prof, steps, n_small = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if prof == "none":
        run(steps, n_small)
        return
    from torch.autograd import profiler

    with profiler.profile(with_stack=prof == "autograd-stack"):
        run(steps, n_small)


main()
