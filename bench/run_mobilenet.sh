#!/usr/bin/env bash
# MobileNetV2 on CPU, two tables (docs/PERFORMANCE.md):
#
# 1. One training step against PyTorch (bench/mobilenet_torch.py, Debian's
#    python3-torch) on the same network, batch and thread count:
#    bench/mobilenet_step at the example's size (alpha 1.0, 28×28×1, first
#    stride 1, batch 64) and at a smaller one (alpha 0.35).
# 2. The users' table: examples/mobilenet_fashion_mnist for EPOCHS epochs
#    over the first TRAIN_EXAMPLES images, one worker (batch 64) against two
#    worker processes from TF_CONFIG (64 per replica), each worker pinned to
#    its own CORES cores with taskset, so neither shares a core: on this
#    2-core machine one core each; on the 16-core GPU machine eight.
#
#   bench/run_mobilenet.sh                         # both tables
#   EPOCHS=1 TRAIN_EXAMPLES=6400 bench/run_mobilenet.sh
#   CONFIG= bench/run_mobilenet.sh                 # the default (-O1) build, not --config=opt
set -euo pipefail
cd "$(dirname "$0")/.."

NPROC=$(nproc)
CORES="${CORES:-$((NPROC / 2 > 0 ? NPROC / 2 : 1))}"
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

# Seconds of training (the sum of Fit's epoch times) in one run's output.
train_seconds() { sed -nE 's/^epoch [0-9]+\/[0-9]+: [0-9]+ steps in ([0-9.]+) s,.*/\1/p' "$1" |
  awk '{ s += $1 } END { print s }'; }
port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
EXAMPLE="$BIN_DIR/examples/mobilenet_fashion_mnist"
# A short run: batch norm's moving averages need momentum 0.9 to mean
# something by its end (the accuracy is printed only as a sanity check).
COMMON=(--epochs="$EPOCHS" --train_examples="$TRAIN_EXAMPLES" --test_examples=2000
  --intra_op_threads="$CORES" --batch_size=64 --bn_momentum=0.9)
taskset -c "0-$((CORES - 1))" "$EXAMPLE" "${COMMON[@]}" >"$OUT_DIR/one.out" 2>&1
P0=$(port)
P1=$(port)
pids=()
for i in 0 1; do
  TF_CONFIG="{\"cluster\": {\"worker\": [\"127.0.0.1:$P0\", \"127.0.0.1:$P1\"]}, \"task\": {\"type\": \"worker\", \"index\": $i}}" \
    taskset -c "$((i * CORES))-$((i * CORES + CORES - 1))" "$EXAMPLE" "${COMMON[@]}" \
    >"$OUT_DIR/two_$i.out" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
one=$(train_seconds "$OUT_DIR/one.out")
two=$(train_seconds "$OUT_DIR/two_0.out")
echo
echo "| $EPOCHS epoch(s) over $TRAIN_EXAMPLES images, $CORES core(s) per worker | 1 worker | 2 workers | speed-up |"
echo "|---|---|---|---|"
echo "| tensorgrid (Fashion-MNIST, test accuracy $(value test_accuracy "$OUT_DIR/one.out") / $(value test_accuracy "$OUT_DIR/two_0.out")) | $one s | $two s | $(awk "BEGIN { printf \"%.2f×\", $one / $two }") |"
echo "| the users' TensorFlow, cats_vs_dogs (reference, not measured here) | 1622 s | 858 s | 1.89× |"
echo "| the users' TensorFlow, tf_flowers (reference, not measured here) | 301 s | 152 s | 1.98× |"
echo "outputs in $OUT_DIR"
