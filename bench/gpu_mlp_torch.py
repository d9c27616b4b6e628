#!/usr/bin/env python3
"""The peer of gpu_benchmark's MLP row: one PyTorch eager training step of the
784-500-500-10 ReLU MLP with Adam (lr 1e-4) and mean softmax cross-entropy,
batch 32 and 256, on the GPU, the batch copied from host memory each step as
tensorgrid's is fed, and the step ended with torch.cuda.synchronize() as
tensorgrid's step ends when the GPU has finished. Prints table rows.

    python3 bench/gpu_mlp_torch.py     # on the GPU machine (its python3 has torch)
"""
import time

try:
    import torch
except ImportError as e:  # not on this machine: say so, never a number
    print(f"| PyTorch MLP step | skipped: {e} | | |")
    raise SystemExit(0)


def seconds_per_step(batch, min_seconds=1.0):
    dev = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 500), torch.nn.ReLU(),
        torch.nn.Linear(500, 500), torch.nn.ReLU(),
        torch.nn.Linear(500, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    images = torch.rand(batch, 784)
    labels = torch.arange(batch) % 10

    def step():
        x = images.to(dev, non_blocking=False)
        y = labels.to(dev, non_blocking=False)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()

    for _ in range(10):
        step()
    n, start = 0, time.perf_counter()
    while True:
        step()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed / n


if not torch.cuda.is_available():
    print("| PyTorch MLP step | skipped: no GPU | | |")
    raise SystemExit(0)
for batch in (32, 256):
    print(f"| PyTorch eager MLP step, batch {batch} | {seconds_per_step(batch) * 1e3:.3f} ms "
          f"| torch {torch.__version__} | |")
