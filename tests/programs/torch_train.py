"""A small CPU training loop for the PyTorch tests and benchmark.

usage: torch_train.py STEPS [plain|profile|bench|bench-profile]

plain:         trains and prints the final loss.
profile:       the same under torch.autograd.profiler, then one line
               "count NAME N" per key_averages() row.
bench:         trains on batches of 64 and prints "step_ms X", the median
               step time after five warm-up steps.
bench-profile: bench under torch.autograd.profiler.
"""
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 5 * 5, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(torch.flatten(x, 1))


def train(steps, size=8, times=None):
    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(size, 1, 12, 12)
    y = torch.randint(0, 10, (size,))
    loss = None
    for _ in range(steps):
        t = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        if times is not None:
            times.append(time.perf_counter() - t)
    return loss.item()


def step_ms(steps):
    times = []
    loss = train(steps + 5, 64, times)
    print("step_ms %.4f" % (statistics.median(times[5:]) * 1e3))
    return loss


def main():
    steps = int(sys.argv[1])
    mode = sys.argv[2] if len(sys.argv) > 2 else "plain"
    if mode == "profile":
        from torch.autograd import profiler

        with profiler.profile() as prof:
            loss = train(steps)
        for e in prof.key_averages():
            print("count %s %d" % (e.key, e.count))
    elif mode == "bench":
        loss = step_ms(steps)
    elif mode == "bench-profile":
        from torch.autograd import profiler

        with profiler.profile():
            loss = step_ms(steps)
    else:
        loss = train(steps)
    print("loss %.6f" % loss)


main()
