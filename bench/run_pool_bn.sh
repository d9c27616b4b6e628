#!/usr/bin/env bash
# Pooling and batch norm, tensorgrid against PyTorch's CPU ops, side by side:
# the cases of bench/pool_bn_benchmark.cc and bench/pool_bn_torch.py at the
# same thread count. Ratio = PyTorch ms / tensorgrid ms (above 1: faster here).
#
#   bench/run_pool_bn.sh               # THREADS=2 by default
#   THREADS=1 SKIP_BUILD=1 bench/run_pool_bn.sh
#   CONFIG=fastbuild bench/run_pool_bn.sh   # the default -O1 build (the work
#                                           # is in Debian's prebuilt libdnnl)
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS="${THREADS:-2}"
REPS="${REPS:-7}"
CONFIG="${CONFIG:-opt}"
if [[ "$CONFIG" == opt ]]; then CONFIG_FLAGS=(--config=opt); else CONFIG_FLAGS=(); fi
ITERS="${ITERS:-10}"
OUT_DIR="${OUT_DIR:-$(mktemp -d -t tensorgrid-poolbn.XXXXXX)}"

if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "installing python3-torch from Debian's archive ..." >&2
  apt-get install -y python3-torch >"$OUT_DIR/apt.log" 2>&1 || {
    tail -20 "$OUT_DIR/apt.log"
    exit 1
  }
fi
if [[ -z "${SKIP_BUILD:-}" ]]; then
  bazel build "${CONFIG_FLAGS[@]}" //bench:pool_bn_benchmark >"$OUT_DIR/build.log" 2>&1 || {
    tail -40 "$OUT_DIR/build.log"
    exit 1
  }
fi
BIN="$(bazel info "${CONFIG_FLAGS[@]}" bazel-bin 2>/dev/null)/bench"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, threads $THREADS, build $CONFIG"
"$BIN/pool_bn_benchmark" --threads="$THREADS" --reps="$REPS" --iters="$ITERS" >"$OUT_DIR/tg.tsv"
/usr/bin/python3 bench/pool_bn_torch.py --threads="$THREADS" --reps="$REPS" --iters="$ITERS" \
  >"$OUT_DIR/torch.tsv"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

/usr/bin/python3 - "$OUT_DIR/tg.tsv" "$OUT_DIR/torch.tsv" <<'PY'
import sys
def read(path):
    rows = {}
    for line in open(path):
        name, ms = line.rstrip("\n").split("\t")
        rows[name] = float(ms)
    return rows
tg, torch = read(sys.argv[1]), read(sys.argv[2])
print(f"| {'case':<42} | {'tensorgrid ms':>13} | {'PyTorch ms':>10} | {'ratio':>5} |")
print(f"|{'-' * 44}|{'-' * 15}|{'-' * 12}|{'-' * 7}|")
for name, ms in tg.items():
    t = torch.get(name)
    ratio = f"{t / ms:5.2f}" if t else "  n/a"
    print(f"| {name:<42} | {ms:13.3f} | {t if t else float('nan'):10.3f} | {ratio} |")
PY
