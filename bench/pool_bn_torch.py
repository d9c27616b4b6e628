"""PyTorch's CPU pooling and batch norm on the cases of pool_bn_benchmark.cc.

Prints "<case>\t<median ms>" per case, with the same names. NHWC cases use
channels_last tensors (the same memory layout), NCHW contiguous ones. The
gradient cases call the backward ATen ops directly with inputs computed
once, like the C++ side feeds them; max pooling's backward gets the indices
its forward saved (TensorFlow's MaxPoolGrad has no such input and finds the
maxima again).

  /usr/bin/python3 bench/pool_bn_torch.py --threads=2
"""
import argparse
import time

import torch
import torch.nn.functional as F


def filled(shape, lo, hi, fmt):
    n = 1
    for d in shape:
        n *= d
    i = torch.arange(n, dtype=torch.int64)
    t = (lo + (hi - lo) * ((i * 7919) % 1000).float() / 1000.0).reshape(shape)
    if fmt == "NHWC" and len(shape) == 4:
        # shape is N, C, H, W logically; lay it out as NHWC.
        t = t.contiguous(memory_format=torch.channels_last)
    return t


def time_case(fn, reps, iters):
    for _ in range(3):
        fn()
    ms = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        ms.append((time.perf_counter() - start) * 1000.0 / iters)
    ms.sort()
    return ms[len(ms) // 2]


def pool_cases(kind, n, h, w, c, k, stride, padding, fmt):
    name = f"{kind}{k}x{k}s{stride}_{padding} {n}x{h}x{w}x{c} {fmt}"
    x = filled((n, c, h, w), -1, 1, fmt)
    if padding == "SAME":
        out = (h + stride - 1) // stride
        total = max((out - 1) * stride + k - h, 0)
        assert total % 2 == 0, "torch pads symmetrically"
        pad = total // 2
    else:
        pad = 0
    if kind == "max":
        y, idx = F.max_pool2d(x, k, stride, pad, return_indices=True)
        g = filled(tuple(y.shape), -1, 1, fmt)
        fwd = lambda: F.max_pool2d(x, k, stride, pad)
        bwd = lambda: torch.ops.aten.max_pool2d_with_indices_backward(
            g, x, [k, k], [stride, stride], [pad, pad], [1, 1], False, idx)
    else:
        y = F.avg_pool2d(x, k, stride, pad, count_include_pad=False)
        g = filled(tuple(y.shape), -1, 1, fmt)
        fwd = lambda: F.avg_pool2d(x, k, stride, pad, count_include_pad=False)
        bwd = lambda: torch.ops.aten.avg_pool2d_backward(
            g, x, [k, k], [stride, stride], [pad, pad], False, False, None)
    return [(name + " fwd", fwd), (name + " bwd", bwd)]


def bn_cases(n, h, w, c, fmt, training):
    name = f"bn_{'train' if training else 'infer'} {n}x{h}x{w}x{c} {fmt}"
    x = filled((n, c, h, w), -2, 2, fmt)
    scale = filled((c,), 0.5, 1.5, fmt)
    offset = filled((c,), -0.5, 0.5, fmt)
    mean = filled((c,), -0.1, 0.1, fmt)
    var = filled((c,), 0.5, 1.5, fmt)
    fwd = lambda: torch.ops.aten.native_batch_norm(x, scale, offset, mean, var, training, 0.01, 1e-3)
    cases = [(name + " fwd", fwd)]
    if training:
        _, save_mean, save_invstd = fwd()
        g = filled((n, c, h, w), -1, 1, fmt)
        bwd = lambda: torch.ops.aten.native_batch_norm_backward(
            g, x, scale, mean, var, save_mean, save_invstd, True, 1e-3, [True, True, True])
        cases.append((name + " bwd", bwd))
    return cases


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--iters", type=int, default=10)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    cases = []
    for fmt in ("NHWC", "NCHW"):
        cases += pool_cases("max", 32, 49, 49, 32, 3, 2, "SAME", fmt)
        cases += pool_cases("avg", 32, 24, 24, 96, 2, 2, "VALID", fmt)
        cases += pool_cases("avg", 32, 6, 6, 320, 6, 6, "VALID", fmt)
        cases += bn_cases(32, 48, 48, 32, fmt, True)
        cases += bn_cases(32, 24, 24, 96, fmt, True)
        cases += bn_cases(32, 12, 12, 192, fmt, True)
        cases += bn_cases(32, 24, 24, 96, fmt, False)
    with torch.no_grad():
        for name, fn in cases:
            print(f"{name}\t{time_case(fn, a.reps, a.iters):.4f}", flush=True)


if __name__ == "__main__":
    main()
