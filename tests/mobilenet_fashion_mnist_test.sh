#!/usr/bin/env bash
# examples/mobilenet_fashion_mnist as real processes, a small MobileNetV2
# (alpha 0.35, two stages, batch norm momentum 0.9 for so short a run) on the
# first 4,096 Fashion-MNIST images:
#  1. one process trains one epoch: a progress bar, the epoch's time, and a
#     test accuracy well above chance (0.1) printed last;
#  2. two workers from TF_CONFIG (free loopback ports) train the same under
#     MultiWorkerMirroredStrategy: both exit 0 and print the same final loss
#     and test accuracy (identical weights and moving statistics);
#  3. a bad flag exits 2 with the usage.
# Bounded waits; every process left over is killed on exit. Without Debian's
# dataset-fashion-mnist package it reports a skip (tests/skip_lib.sh).
#
# Usage: mobilenet_fashion_mnist_test.sh EXAMPLE CLUSTER_LIB
set -u
BIN="$1"
source "$2"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# shellcheck source=tests/skip_lib.sh
source "$(dirname "$0")/skip_lib.sh"
skip_without_fashion_mnist
holds() { awk "BEGIN { exit !(($1) $2 ($3)) }" </dev/null; }
SMALL=(--alpha=0.35 --stages=2 --first_stride=2 --train_examples=4096 --test_examples=1000
  --epochs=1 --intra_op_threads=1 --bn_momentum=0.9)
value() { sed -nE "s/^$1=([0-9.]+)\$/\1/p" "$2"; }

# 1. One process.
timeout 300 "$BIN" "${SMALL[@]}" --batch_size=64 >"$TMP/one.out" 2>"$TMP/one.err"
RC=$?
a=$(value test_accuracy "$TMP/one.out")
if [[ $RC -eq 0 ]] && grep -q $'\r    64/64 \[==============================\]' "$TMP/one.out" &&
   grep -qE '^epoch 1/1: 64 steps in [0-9.]+ s, loss ' "$TMP/one.out" &&
   [[ "$(tail -n 1 "$TMP/one.out")" == "test_accuracy=$a" ]] && holds "$a" '>' 0.5; then
  echo "ok 1: one process, test_accuracy=$a"
else
  fail "one process: exit $RC, accuracy '$a' (want > 0.5): [$(cat "$TMP/one.out")] [$(tail -n 20 "$TMP/one.err")]"
fi

# 2. Two workers, 32 images each per step: the same global batch.
read -r P0 P1 < <(free_ports 2)
for i in 0 1; do
  TF_CONFIG="{\"cluster\": {\"worker\": [\"127.0.0.1:$P0\", \"127.0.0.1:$P1\"]}, \"task\": {\"type\": \"worker\", \"index\": $i}}" \
    timeout 300 "$BIN" "${SMALL[@]}" --batch_size=32 >"$TMP/w$i.out" 2>"$TMP/w$i.err" &
  PIDS+=($!)  # cluster_lib.sh's EXIT trap kills what is left
done
wait "${PIDS[0]}"
RC0=$?
wait "${PIDS[1]}"
RC1=$?
a0=$(value test_accuracy "$TMP/w0.out")
a1=$(value test_accuracy "$TMP/w1.out")
l0=$(value final_loss "$TMP/w0.out")
l1=$(value final_loss "$TMP/w1.out")
if [[ $RC0 -eq 0 && $RC1 -eq 0 && -n "$a0" && "$a0" == "$a1" && "$l0" == "$l1" ]] &&
   grep -q "2 replica(s), global batch 64" "$TMP/w1.out" && holds "$a0" '>' 0.5; then
  echo "ok 2: two workers agree: final_loss=$l0 test_accuracy=$a0"
else
  fail "two workers: exit $RC0/$RC1, loss '$l0'/'$l1', accuracy '$a0'/'$a1': [$(cat "$TMP/w0.out")] [$(tail -n 20 "$TMP/w0.err")] [$(tail -n 20 "$TMP/w1.err")]"
fi

# 3. A bad flag.
timeout 30 "$BIN" --stages=9 >"$TMP/bad.out" 2>&1
RC=$?
[[ $RC -eq 2 ]] && grep -q -- "--stages=9 is not in 1..7" "$TMP/bad.out" &&
  grep -q "usage: mobilenet_fashion_mnist" "$TMP/bad.out" ||
  fail "--stages=9: exit $RC, [$(cat "$TMP/bad.out")]"

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
