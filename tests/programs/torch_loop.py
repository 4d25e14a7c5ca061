"""Training loops that PyTorch annotates, for tests/integration/torch_structure.sh.

usage: torch_loop.py sgd|cnn [plain|profile]

sgd:  12 batches from a DataLoader, each with a record_function("my_block")
      block around the forward pass, which ends in a Python autograd
      Function (its node is named in Python: MyScaleBackward); SGD. Then, outside the loop: a range
      opened as a decorator (twice), one left by an exception, and one on
      another thread.
cnn:  a CNN with BatchNorm and dropout, a mean loss, Adam, 6 steps.
plain:   runs and prints the final loss.
profile: the same under torch.autograd.profiler, then one line
         "count NAME N" per key_averages() row.
"""
import sys
import threading

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import record_function
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)


def extras():
    # Made here: a record_function object makes a tensor when it is made,
    # which the profile mode's counts would not see.
    @record_function("my_decorated")
    def decorated(x):
        return torch.relu(x)

    x = torch.ones(4)
    decorated(x)
    decorated(x)
    try:
        with record_function("my_raise"):
            torch.neg(x)
            raise ValueError("left by an exception")
    except ValueError:
        pass

    def other():
        with record_function("my_thread"):
            torch.exp(x)

    t = threading.Thread(target=other)
    t.start()
    t.join()


class MyScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v):
        return v * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def sgd():
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(96, 20), torch.randint(0, 4, (96,)))
    loader = DataLoader(data, batch_size=8)
    net = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    loss = None
    for x, y in loader:
        opt.zero_grad()
        with record_function("my_block"):
            out = MyScale.apply(net(x))
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
    return loss.item()


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(4 * 5 * 5, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(self.drop(torch.flatten(x, 1)))


def cnn():
    torch.manual_seed(0)
    net = Cnn()
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    x = torch.randn(8, 1, 12, 12)
    y = torch.randint(0, 10, (8,))
    loss = None
    for _ in range(6):
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y, reduction="none").mean()
        loss.backward()
        opt.step()
    return loss.item()


def main():
    what = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else "plain"
    run = sgd if what == "sgd" else cnn
    if mode == "profile":
        from torch.autograd import profiler

        with profiler.profile() as prof:
            loss = run()
        for e in prof.key_averages():
            print("count %s %d" % (e.key, e.count))
    else:
        loss = run()
        if what == "sgd":
            extras()
    print("loss %.6f" % loss)


if __name__ == "__main__":
    main()
