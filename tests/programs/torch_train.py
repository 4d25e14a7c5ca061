"""A small CPU training loop for the PyTorch tests and benchmark.

usage: torch_train.py STEPS [plain|profile|bench]

plain:   trains and prints the final loss.
profile: the same under torch.autograd.profiler, then one line
         "count NAME N" per key_averages() row.
bench:   prints "step_ms X" (the mean step time, after two warm-up steps)
         for no profiler and for torch.autograd.profiler, then the loss.
"""
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


def train(steps, size=8):
    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(size, 1, 12, 12)
    y = torch.randint(0, 10, (size,))
    loss = None
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
    return loss.item()


def step_ms(steps, size):
    train(2, size)
    t = time.perf_counter()
    train(steps, size)
    return (time.perf_counter() - t) * 1e3 / steps


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
        from torch.autograd import profiler

        print("step_ms none %.4f" % step_ms(steps, 64))
        with profiler.profile():
            ms = step_ms(steps, 64)
        print("step_ms profiler %.4f" % ms)
        loss = train(1)
    else:
        loss = train(steps)
    print("loss %.6f" % loss)


main()
