"""A small CNN training loop for tests/gpu/torch_cnn.sh.

usage: torch_cnn.py none|mxprof|torch [TRACE]
Runs STEPS (20, or $TORCH_CNN_STEPS) training steps of a small CNN on
random data (fixed seed, deterministic cuDNN) and prints
{"median_step_ms": x, "steps": STEPS}. With "torch", the steps run under
torch.profiler (CPU and CUDA activity) and the Chrome trace goes to TRACE.
With "mxprof", the steps run inside an NVTX range "steps", so that
MXPROF_CAPTURE_NVTX=steps records what torch.profiler sees: the steps,
not the set-up before them.
"""
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn

STEPS = int(os.environ.get("TORCH_CNN_STEPS", "20"))


def model():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 8 * 8, 10)).cuda()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "none"
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    net = model()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(64, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    torch.cuda.synchronize()
    times = []

    def step():
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)

    if mode == "torch":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU,
                                 ProfilerActivity.CUDA]) as prof:
            for _ in range(STEPS):
                step()
        prof.export_chrome_trace(sys.argv[2])
    elif mode == "mxprof":
        torch.cuda.nvtx.range_push("steps")
        for _ in range(STEPS):
            step()
        torch.cuda.nvtx.range_pop()
    else:
        for _ in range(STEPS):
            step()
    print(json.dumps({"median_step_ms": statistics.median(times),
                      "steps": STEPS}))


if __name__ == "__main__":
    main()
