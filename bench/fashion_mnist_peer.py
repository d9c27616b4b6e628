#!/usr/bin/python3
"""The peer for examples/fashion_mnist.cc: the same model, optimizer, batch and
data pipeline in PyTorch, trained for --steps steps, then evaluated.

    /usr/bin/python3 bench/fashion_mnist_peer.py [--steps=1000] [--threads=2] > peer.json

Run with Debian's python3-torch (apt-get install python3-torch). The model is
784-500-500-10 with ReLU, Glorot-uniform weights and zero biases (what
tf.layers.dense and the C++ example use; --init=torch keeps nn.Linear's own
initialization), mean softmax cross-entropy, Adam (lr 1e-4, betas 0.9/0.999,
eps 1e-8), batches of 32 drawn from a fresh permutation of the 60,000
training images each epoch (the last partial batch dropped). The data are
Debian's dataset-fashion-mnist files, scaled to [0, 1] as LoadFashionMnist
does.

The timed part is the training loop, as the C++ example times it: from the
first batch to the last step, batching included, loading and evaluation
excluded. One JSON object on stdout:

    {"available": true, "steps": 1000, "seconds": 4.1, "steps_per_s": 243.9,
     "examples_per_s": 7804.9, "first_loss": 1.61, "last_loss": 0.41,
     "test_accuracy": 0.8102, "threads": 2, "torch": "1.13.0a0", ...}

or {"available": false, "reason": "..."} with exit status 0 when torch or the
data are missing, so that the caller can say why.
"""
import argparse
import gzip
import json
import os
import sys
import time

DATA_DIR = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    import numpy as np

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError(f"{path}: not an IDX file of uint8")
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load(data_dir, prefix):
    import torch

    def find(name):
        for candidate in (name, name + ".gz"):
            path = os.path.join(data_dir, candidate)
            if os.path.exists(path):
                return path
        raise FileNotFoundError(
            f"{os.path.join(data_dir, name)}[.gz] not found; install Debian's "
            "dataset-fashion-mnist package (apt-get install dataset-fashion-mnist)")

    images = read_idx(find(f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(find(f"{prefix}-labels-idx1-ubyte"))
    x = torch.from_numpy(images.reshape(len(images), 784).astype("float32") / 255.0)
    y = torch.from_numpy(labels.astype("int64"))
    return x, y


def model(init):
    import torch
    from torch import nn

    net = nn.Sequential(nn.Linear(784, 500), nn.ReLU(), nn.Linear(500, 500), nn.ReLU(),
                        nn.Linear(500, 10))
    if init == "glorot":
        for layer in net:
            if isinstance(layer, nn.Linear):
                nn.init.xavier_uniform_(layer.weight)
                nn.init.zeros_(layer.bias)
    return net


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    parser.add_argument("--init", choices=["glorot", "torch"], default="glorot")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log_every", type=int, default=100, help="progress lines on stderr")
    parser.add_argument("--data_dir", default=DATA_DIR)
    args = parser.parse_args()

    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(json.dumps({"available": False, "reason": f"no torch ({e}); "
                          "apt-get install python3-torch"}))
        return 0
    try:
        train_x, train_y = load(args.data_dir, "train")
        test_x, test_y = load(args.data_dir, "t10k")
    except (OSError, ValueError) as e:
        print(json.dumps({"available": False, "reason": str(e)}))
        return 0

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    net = model(args.init)
    adam = torch.optim.Adam(net.parameters(), lr=args.learning_rate, betas=(0.9, 0.999), eps=1e-8)
    generator = torch.Generator().manual_seed(args.seed)
    per_epoch = len(train_y) // args.batch_size

    losses = []  # mean loss per --log_every steps
    interval = 0.0
    perm = None
    start = time.perf_counter()
    for step in range(args.steps):
        i = step % per_epoch
        if i == 0:
            perm = torch.randperm(len(train_y), generator=generator)
        index = perm[i * args.batch_size:(i + 1) * args.batch_size]
        loss = F.cross_entropy(net(train_x[index]), train_y[index])
        adam.zero_grad(set_to_none=True)
        loss.backward()
        adam.step()
        interval += loss.item()
        if (step + 1) % args.log_every == 0 or step + 1 == args.steps:
            n = (step + 1) % args.log_every or args.log_every
            losses.append(interval / n)
            interval = 0.0
            print(f"step {step + 1}/{args.steps}, loss {losses[-1]:.4f}", file=sys.stderr)
    seconds = time.perf_counter() - start

    with torch.no_grad():
        correct = sum(int((net(test_x[i:i + 1000]).argmax(1) == test_y[i:i + 1000]).sum())
                      for i in range(0, len(test_y), 1000))
    print(json.dumps({
        "available": True, "steps": args.steps, "batch_size": args.batch_size,
        "seconds": round(seconds, 3), "steps_per_s": round(args.steps / seconds, 1),
        "examples_per_s": round(args.steps * args.batch_size / seconds, 1),
        "first_loss": round(losses[0], 4), "last_loss": round(losses[-1], 4),
        "test_accuracy": correct / len(test_y), "threads": torch.get_num_threads(),
        "init": args.init, "torch": torch.__version__,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
