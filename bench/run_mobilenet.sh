#!/usr/bin/env bash
# MobileNetV2 on CPU, two tables (docs/PERFORMANCE.md):
#
# 1. One training step against PyTorch (bench/mobilenet_torch.py, Debian's
#    python3-torch) on the same network, batch and thread count:
#    bench/mobilenet_step at the example's size (alpha 1.0, 28×28×1, first
#    stride 1, batch 64) and at a smaller one (alpha 0.35).
# 2. The users' table (bench/run_scaling.sh's MobileNetV2 rows):
#    examples/mobilenet_fashion_mnist for EPOCHS epochs over the first
#    TRAIN_EXAMPLES images, one worker (batch 64) against two worker
#    processes from TF_CONFIG (64 per replica), each worker pinned to its own
#    half of the cores with taskset, so neither shares a core: on this
#    2-core machine one core each; on the 16-core GPU machine eight.
#
#   bench/run_mobilenet.sh                         # both tables
#   EPOCHS=1 TRAIN_EXAMPLES=6400 bench/run_mobilenet.sh
#   CONFIG= bench/run_mobilenet.sh                 # the default (-O1) build, not --config=opt
set -euo pipefail
cd "$(dirname "$0")/.."

NPROC=$(nproc)
EPOCHS="${EPOCHS:-1}"
TRAIN_EXAMPLES="${TRAIN_EXAMPLES:-12800}"
OUT_DIR="${OUT_DIR:-$(mktemp -d -t tensorgrid-mobilenet.XXXXXX)}"
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-torch \
    >"$OUT_DIR/apt.log" 2>&1 || { echo "python3-torch could not be installed"; exit 1; }
fi
CONFIG_FLAGS=()
[[ -n "${CONFIG-opt}" ]] && CONFIG_FLAGS=(--config="${CONFIG-opt}")
if [[ -z "${SKIP_BUILD:-}" ]]; then
  bazel build "${CONFIG_FLAGS[@]}" //bench:mobilenet_step //examples:mobilenet_fashion_mnist \
    >"$OUT_DIR/build.log" 2>&1 || { tail -40 "$OUT_DIR/build.log"; exit 1; }
fi
BIN_DIR="$(bazel info "${CONFIG_FLAGS[@]}" bazel-bin 2>/dev/null)"
value() { sed -nE "s/^$1=([0-9.]+)\$/\1/p" "$2"; }
build="${CONFIG-opt}"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $NPROC cores; build: ${build:-default (-O1)}"

echo
echo "| MobileNetV2 training step, batch 64, $NPROC threads | tensorgrid | PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)') | tensorgrid / PyTorch speed |"
echo "|---|---|---|---|"
for alpha in 1.0 0.35; do
  args=(--alpha="$alpha" --batch=64 --stages=7 --first_stride=1 --size=28 --channels=1)
  "$BIN_DIR/bench/mobilenet_step" --threads="$NPROC" "${args[@]}" >"$OUT_DIR/tg_$alpha.out"
  /usr/bin/python3 bench/mobilenet_torch.py --threads="$NPROC" "${args[@]}" \
    >"$OUT_DIR/torch_$alpha.out"
  tg=$(value tensorgrid_ms_per_step "$OUT_DIR/tg_$alpha.out")
  pt=$(value torch_ms_per_step "$OUT_DIR/torch_$alpha.out")
  echo "| alpha $alpha, 28×28×1 | $tg ms | $pt ms | $(awk "BEGIN { printf \"%.2f×\", $pt / $tg }") |"
done

# The users' table: bench/run_scaling.sh's MobileNetV2 rows, each worker
# pinned to its own half of the cores.
echo
SKIP_BUILD=1 BIN_DIR="$BIN_DIR" MODELS=mobilenet WORKER_COUNTS=2 EPOCHS="$EPOCHS" \
  TRAIN_EXAMPLES="$TRAIN_EXAMPLES" OUT_DIR="$OUT_DIR/scaling" bash bench/run_scaling.sh |
  grep '^|'
echo "| the users' TensorFlow, cats_vs_dogs (reference, not measured here) | 2 | a machine each | 1622 s | 858 s | 1.89x | 0.95 | - | - |"
echo "| the users' TensorFlow, tf_flowers (reference, not measured here) | 2 | a machine each | 301 s | 152 s | 1.98x | 0.99 | - | - |"
echo "outputs in $OUT_DIR"
