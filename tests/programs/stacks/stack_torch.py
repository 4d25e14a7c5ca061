# stack_torch.py - a small conv net run 3 times, for
# tests/integration/stack_torch.sh: its operators come from forward, line 12.
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.conv(x).relu()


torch.manual_seed(0)
net = Net()
x = torch.randn(2, 3, 8, 8)
with torch.no_grad():
    for _ in range(3):
        y = net(x)
print(tuple(y.shape))
