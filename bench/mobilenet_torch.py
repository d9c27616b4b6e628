#!/usr/bin/env python3
"""The PyTorch peer of bench/mobilenet_step.cc: one eager training step of
the same MobileNetV2 (the paper's blocks, width multiplier, first stride,
batch norm with epsilon 1e-3 and momentum 0.01 in PyTorch's convention,
ReLU6, global average pooling, a linear head), Adam 1e-3 and mean softmax
cross-entropy, on CPU with the given thread count (--device=cuda: on the
GPU, each step ending with the loss on the host, as tensorgrid's fetch;
TF32 only with TG_GPU_ALLOW_TF32=1). Prints one line:
"torch_ms_per_step=12.34".

    /usr/bin/python3 bench/mobilenet_torch.py --threads=2 --batch=64 --alpha=1.0
"""
import argparse
import os
import time

import torch
from torch import nn

STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
          (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def scaled(channels, alpha):
    v = channels * alpha
    rounded = max(8, int(v + 4) // 8 * 8)
    return rounded + 8 if rounded < 0.9 * v else rounded


def conv_bn(cin, cout, kernel, stride, groups=1, relu6=True):
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout, eps=1e-3, momentum=0.01)]
    if relu6:
        layers.append(nn.ReLU6())
    return layers


class Block(nn.Module):
    def __init__(self, cin, cout, expansion, stride):
        super().__init__()
        hidden = cin * expansion
        layers = conv_bn(cin, hidden, 1, 1) if expansion != 1 else []
        layers += conv_bn(hidden, hidden, 3, stride, groups=hidden)
        layers += conv_bn(hidden, cout, 1, 1, relu6=False)
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


def mobilenet_v2(alpha, stages, first_stride, in_channels, classes, last=1280):
    channels = scaled(32, alpha)
    layers = conv_bn(in_channels, channels, 3, first_stride)
    for t, c, n, s in STAGES[:stages]:
        out = scaled(c, alpha)
        for r in range(n):
            layers.append(Block(channels, out, t, s if r == 0 else 1))
            channels = out
    last = scaled(last, alpha) if alpha > 1 else last
    layers += conv_bn(channels, last, 1, 1)
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(last, classes)]
    return nn.Sequential(*layers)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--stages", type=int, default=7)
    p.add_argument("--first_stride", type=int, default=1)
    p.add_argument("--size", type=int, default=28)
    p.add_argument("--channels", type=int, default=1)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    tf32 = os.environ.get("TG_GPU_ALLOW_TF32") == "1"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    model = mobilenet_v2(a.alpha, a.stages, a.first_stride, a.channels, 10).to(a.device)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    images = torch.rand(a.batch, a.channels, a.size, a.size, device=a.device)
    labels = torch.arange(a.batch, device=a.device) % 10

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(3):
        step()
    times = []
    for _ in range(a.steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    times.sort()
    print(f"torch_ms_per_step={1000 * times[len(times) // 2]:.2f}")


if __name__ == "__main__":
    main()
