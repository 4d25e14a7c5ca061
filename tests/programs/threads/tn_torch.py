# tn_torch.py - for threads_now_torch: a small PyTorch training loop of 40
# steps that prints each step's loss. After step 20 it creates argv[1] and
# computes on, printing nothing, until argv[1].go exists, so that the
# stacks are taken while it runs.
import os
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Linear(64, 64)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32, 64)
y = torch.randn(32, 64)


def step():
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    return loss.item()


for i in range(40):
    print(i, "%.6f" % step(), flush=True)
    if i == 20:
        open(sys.argv[1], "w").close()
        while not os.path.exists(sys.argv[1] + ".go"):
            torch.mm(x, x.t())
