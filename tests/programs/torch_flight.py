"""A training loop with one slow step, for tests/integration/flight_slow.sh.

usage: torch_flight.py [STEPS [SLOW_STEP [SLEEP_S [STEP_S]]]]

STEPS (60) SGD steps on a small MLP, each sleeping STEP_S (0.05) seconds
so that a step's time hardly depends on the machine's load; the step
numbered SLOW_STEP (41) sleeps SLEEP_S (1) seconds instead, before
optimizer.step(), which ends the step.
Prints the final loss, the same with and without mxprof.
"""
import sys
import time

import torch
import torch.nn as nn

torch.set_num_threads(1)

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 60
slow = int(sys.argv[2]) if len(sys.argv) > 2 else 41
sleep_s = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
step_s = float(sys.argv[4]) if len(sys.argv) > 4 else 0.05

torch.manual_seed(0)
x = torch.randn(64, 32)
y = torch.randint(0, 4, (64,))
net = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
loss_fn = nn.CrossEntropyLoss()
for i in range(steps):
    opt.zero_grad()
    loss = loss_fn(net(x), y)
    loss.backward()
    time.sleep(sleep_s if i == slow else step_s)
    opt.step()
print("loss %.6f" % loss.item())
