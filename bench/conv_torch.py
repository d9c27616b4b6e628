#!/usr/bin/python3
"""PyTorch's convolution at bench/conv_benchmark.cc's four layers.

Batch 32, float32, PyTorch's own NCHW layout (and channels_last, its NHWC),
forward and both backprops (aten.convolution_backward with one gradient asked
for at a time), on --threads threads. Prints one JSON object per line:
{"layer", "pass", "format", "threads", "ms"} with the median time of one call.

  /usr/bin/python3 bench/conv_torch.py --threads=2 [--min_time=0.5]

With --device=cuda, the same on the GPU through cuDNN (cudnn.benchmark: the
fastest algorithm per shape, as tensorgrid's cudnnFind), each call followed
by a synchronization (a tensorgrid step ends when its GPU work has), TF32
only when TG_GPU_ALLOW_TF32=1 as for tensorgrid, plus the issue's 3x3
56x56x64->64 layer: the peer of bench/gpu_benchmark.cc's convolution rows.
"""
import argparse
import json
import os
import statistics
import sys
import time

try:
    import torch
except ImportError as e:  # bench/run_conv.sh installs python3-torch
    print(json.dumps({"available": False, "reason": str(e)}))
    sys.exit(0)

BATCH = 32
# name, size, in_depth, out_depth (depthwise: the multiplier), window, stride,
# depthwise: the same as conv_benchmark.cc's kLayers.
LAYERS = [
    ("conv3x3_s1 28x28x64->64", 28, 64, 64, 3, 1, False),
    ("conv3x3_s2 56x56x32->64", 56, 32, 64, 3, 2, False),
    ("pointwise1x1 28x28x144->32", 28, 144, 32, 1, 1, False),
    ("depthwise3x3 56x56x144", 56, 144, 1, 3, 1, True),
]
# On the GPU also (gpu_benchmark.cc's kConvLayers).
GPU_LAYERS = [("conv3x3_s1 56x56x64->64", 56, 64, 64, 3, 1, False)] + LAYERS
PASSES = ["forward", "backprop_input", "backprop_filter"]


def median_ms(fn, min_time):
    fn()  # warm up (primitive creation, algorithm choice, allocations)
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(times) < 5:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def layer_fns(layer, channels_last, device):
    _, size, cin, cout, k, stride, depthwise = layer
    groups = cin if depthwise else 1
    out_ch = cin * cout if depthwise else cout
    out_size = (size + stride - 1) // stride
    # SAME for these layers: k // 2 each side gives TensorFlow's output size
    # (stride 2 pads one row before and after instead of 0 and 1: same work).
    pad = k // 2
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    x = torch.randn(BATCH, cin, size, size, device=device).to(memory_format=fmt)
    w = torch.randn(out_ch, cin // groups, k, k, device=device).to(memory_format=fmt)
    dy = torch.randn(BATCH, out_ch, out_size, out_size, device=device).to(memory_format=fmt)
    conv = torch.nn.functional.conv2d
    backward = torch.ops.aten.convolution_backward

    def bwd(mask):
        return backward(dy, x, w, None, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], groups,
                        mask)

    fns = [
        lambda: conv(x, w, None, stride, pad, 1, groups),
        lambda: bwd([True, False, False]),
        lambda: bwd([False, True, False]),
    ]
    if device == "cpu":
        return fns
    return [lambda fn=fn: (fn(), torch.cuda.synchronize()) for fn in fns]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--min_time", type=float, default=0.5)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    layers = LAYERS
    if args.device == "cuda":
        if not torch.cuda.is_available():
            print(json.dumps({"available": False, "reason": "no GPU"}))
            return
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.allow_tf32 = os.environ.get("TG_GPU_ALLOW_TF32") == "1"
        layers = GPU_LAYERS
    with torch.no_grad():
        for layer in layers:
            for channels_last in (False, True):
                for p, fn in enumerate(layer_fns(layer, channels_last, args.device)):
                    print(json.dumps({
                        "layer": layer[0], "pass": PASSES[p],
                        "format": "NHWC" if channels_last else "NCHW",
                        "device": args.device, "threads": args.threads,
                        "ms": median_ms(fn, args.min_time), "torch": torch.__version__,
                    }), flush=True)


if __name__ == "__main__":
    main()
