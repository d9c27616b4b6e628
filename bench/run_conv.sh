#!/usr/bin/env bash
# Convolution speed side by side: bench/conv_benchmark (tensorgrid's oneDNN
# kernels, built optimized) against bench/conv_torch.py (PyTorch from Debian's
# python3-torch, installed here if missing), the same four batch-32 layers,
# forward and both backprops, in NHWC and NCHW, on 1 and 2 threads. The two
# run in turn, REPS rounds; each cell is the best round (a busy machine only
# ever makes a run slower). ratio = PyTorch's time / tensorgrid's in the same
# layout: above 1.0 tensorgrid is faster.
#
#   bench/run_conv.sh                     # 3 rounds x 1 and 2 threads: about 3 minutes
#   REPS=1 THREADS=2 MIN_TIME=0.2 bench/run_conv.sh
#   SKIP_BUILD=1 bench/run_conv.sh
# Raw output is kept in $OUT_DIR (default: a temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."

REPS="${REPS:-3}"
THREADS="${THREADS:-1 2}"
MIN_TIME="${MIN_TIME:-0.3}"
OUT_DIR="${OUT_DIR:-$(mktemp -d -t tensorgrid-conv.XXXXXX)}"
mkdir -p "$OUT_DIR"

if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "installing python3-torch (Debian) for the peer ..." >&2
  apt-get install -y python3-torch >"$OUT_DIR/apt.log" 2>&1 || echo "could not install python3-torch; see $OUT_DIR/apt.log" >&2
fi
if [[ -z "${SKIP_BUILD:-}" ]]; then
  bazel build --config=opt //bench:conv_benchmark >"$OUT_DIR/build.log" 2>&1 || {
    tail -40 "$OUT_DIR/build.log"
    exit 1
  }
fi
BIN="$(bazel info --config=opt bazel-bin 2>/dev/null)/bench/conv_benchmark"

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq 1 "$REPS"); do
  for t in $THREADS; do
    echo "round $rep/$REPS, $t thread(s): tensorgrid ..." >&2
    "$BIN" --benchmark_filter="threads:$t/" --benchmark_min_time="$MIN_TIME" \
      --benchmark_format=json >"$OUT_DIR/tensorgrid-t$t-r$rep.json" 2>"$OUT_DIR/tensorgrid-t$t-r$rep.log"
    echo "round $rep/$REPS, $t thread(s): pytorch ..." >&2
    /usr/bin/python3 bench/conv_torch.py --threads="$t" --min_time="$MIN_TIME" \
      >"$OUT_DIR/torch-t$t-r$rep.jsonl" 2>"$OUT_DIR/torch-t$t-r$rep.log" || true
  done
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

/usr/bin/python3 - "$OUT_DIR" "$LOAD_BEFORE" "$LOAD_AFTER" <<'EOF'
import glob, json, os, sys
out_dir, load_before, load_after = sys.argv[1:4]
best = {}  # (layer, pass, threads, who, format) -> ms
def keep(key, ms):
    best[key] = min(ms, best.get(key, float("inf")))
for path in glob.glob(os.path.join(out_dir, "tensorgrid-*.json")):
    for b in json.load(open(path))["benchmarks"]:
        words = b["label"].split(" ")  # "<name> <size> <pass> <format>"
        threads = int(b["name"].split("threads:")[1].split("/")[0])
        keep((" ".join(words[:2]), words[2], threads, "tg", words[3]), b["real_time"])
torch_version = None
for path in glob.glob(os.path.join(out_dir, "torch-*.jsonl")):
    for line in open(path):
        r = json.loads(line)
        if not r.get("available", True):
            print("PyTorch unavailable:", r.get("reason")); continue
        torch_version = r["torch"]
        keep((r["layer"], r["pass"], r["threads"], "torch", r["format"]), r["ms"])
rows = sorted({k[:3] for k in best}, key=lambda k: (k[2], k[0], ["forward", "backprop_input", "backprop_filter"].index(k[1])))
print(f"Conv2D / depthwise, batch 32, float32, ms per call (best of rounds); torch {torch_version}")
print(f"load average before {load_before}, after {load_after}")
hdr = f"{'layer':28} {'pass':16} {'thr':>3} {'tg NHWC':>8} {'torch NHWC':>10} {'ratio':>6} {'tg NCHW':>8} {'torch NCHW':>10} {'ratio':>6}"
print(hdr); print("-" * len(hdr))
def cell(k):
    v = best.get(k); return f"{v:.2f}" if v is not None else "-"
def ratio(t, g):
    a, b = best.get(t), best.get(g); return f"{a / b:.2f}x" if a and b else "-"
for layer, p, t in rows:
    k = lambda who, f: (layer, p, t, who, f)
    print(f"{layer:28} {p:16} {t:>3} {cell(k('tg','NHWC')):>8} {cell(k('torch','NHWC')):>10} "
          f"{ratio(k('torch','NHWC'), k('tg','NHWC')):>6} {cell(k('tg','NCHW')):>8} "
          f"{cell(k('torch','NCHW')):>10} {ratio(k('torch','NCHW'), k('tg','NCHW')):>6}")
EOF
echo "raw output: $OUT_DIR" >&2
