"""A CUDA loop whose steps are NVTX ranges, for tests/gpu/torch_steps.sh.

usage: torch_steps.py
Runs STEPS (12) steps; each is an NVTX range "step" holding KERNELS (4)
in-place elementwise kernels on one tensor and a synchronize, so that
every kernel of a step runs inside it. Prints "done STEPS".
"""
import torch

STEPS = 12
KERNELS = 4

x = torch.ones(1 << 20, device="cuda")
torch.cuda.synchronize()
for i in range(STEPS):
    torch.cuda.nvtx.range_push("step")
    for k in range(KERNELS // 2):
        x.add_(1.0)
        x.mul_(0.5)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
print("done", STEPS)
