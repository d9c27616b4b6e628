#!/usr/bin/env bash
# examples/multi_worker_fashion_mnist as real processes:
#  1. two workers under one tg_launch command (free loopback ports) train one
#     epoch with MultiWorkerMirroredStrategy; tg_launch exits 0, both workers
#     print the same test_accuracy, above 0.80;
#     then the same with two devices per worker (four replicas), a
#     784-64-32-10 network whose gradients go in four buckets, and one traced
#     step: each worker writes its Chrome trace and counts 8 all-reduces
#     (4 buckets x 2 replicas);
#  2. one worker of a two-worker TF_CONFIG cluster alone fails within its
#     collective timeout (exit 1), naming the worker that never joined;
#  3. a bad flag (or --hidden width) exits 2 with the usage.
# Bounded waits; every task left over is killed on exit. Without Debian's
# dataset-fashion-mnist package it reports a skip (tests/skip_lib.sh).
#
# Usage: multi_worker_fashion_mnist_test.sh TG_LAUNCH EXAMPLE CLUSTER_LIB
set -u
TG_LAUNCH="$1"
BIN="$2"
source "$3"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# shellcheck source=tests/skip_lib.sh
source "$(dirname "$0")/skip_lib.sh"
skip_without_fashion_mnist
holds() { awk "BEGIN { exit !(($1) $2 ($3)) }" </dev/null; }
TASK_PIDS=()
kill_tasks() {
  local pid
  for pid in "${TASK_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  kill_servers
}
trap kill_tasks EXIT

# The test_accuracy worker $2 printed in tg_launch's output $1.
accuracy() { sed -nE "s/^\[worker:$2\] worker $2: test_accuracy=(0\.[0-9]{4})\$/\1/p" "$1"; }

# 1. Two workers, one command.
timeout 300 "$TG_LAUNCH" --workers=2 --task_binary="$BIN" -- --epochs=1 \
  >"$TMP/launch.out" 2>"$TMP/launch.err"
RC=$?
read -r -a TASK_PIDS < <(sed -nE 's/^pid \S+ ([0-9]+)$/\1/p' "$TMP/launch.out" | xargs)
[[ $RC -eq 0 ]] || fail "tg_launch: exit status $RC; stderr: $(tail -n 30 "$TMP/launch.err")"
[[ ${#TASK_PIDS[@]} -eq 2 ]] || fail "expected 2 task pids: [$(cat "$TMP/launch.out")]"
grep -q "^\[worker:0\] worker 0: 2 replicas in sync, global batch 128$" "$TMP/launch.out" ||
  fail "no '2 replicas in sync, global batch 128' line: [$(cat "$TMP/launch.out")]"
grep -q "^\[worker:1\] worker 1: replicas on /job:worker/replica:0/task:1/device:CPU:0$" \
  "$TMP/launch.out" || fail "no 'replicas on' line naming worker 1's CPU: [$(cat "$TMP/launch.out")]"
a0=$(accuracy "$TMP/launch.out" 0)
a1=$(accuracy "$TMP/launch.out" 1)
if [[ -n "$a0" && "$a0" == "$a1" ]] && holds "$a0" '>' 0.80; then
  echo "ok 1: both workers reach test_accuracy=$a0"
else
  fail "test_accuracy: worker 0 '$a0', worker 1 '$a1' (want equal, > 0.80): [$(cat "$TMP/launch.out")]"
fi

# 1b. Two devices per worker: four replicas, two on each task (local and
# remote members in one ring), the same global batch. Buckets of 4 KiB, last
# layer first: [b3 w3 b2] (1448 bytes), w2 (8 KiB), [b1], w1 (196 KiB).
timeout 300 "$TG_LAUNCH" --workers=2 --task_binary="$BIN" -- --epochs=1 --local_devices=2 \
  --batch_size=32 --hidden=64,32 --bytes_per_pack=4096 --trace_file="$TMP/step.json" \
  >"$TMP/four.out" 2>"$TMP/four.err"
RC=$?
[[ $RC -eq 0 ]] || fail "tg_launch, 2 devices each: exit status $RC; stderr: $(tail -n 30 "$TMP/four.err")"
grep -q "^\[worker:1\] worker 1: 4 replicas in sync, global batch 128$" "$TMP/four.out" ||
  fail "no '4 replicas in sync' line: [$(cat "$TMP/four.out")]"
b0=$(accuracy "$TMP/four.out" 0)
b1=$(accuracy "$TMP/four.out" 1)
if [[ -n "$b0" && "$b0" == "$b1" ]] && holds "$b0" '>' 0.80; then
  echo "ok 1b: 4 replicas on 2 workers reach test_accuracy=$b0"
else
  fail "4 replicas: worker 0 '$b0', worker 1 '$b1' (want equal, > 0.80): [$(cat "$TMP/four.out")]"
fi
for k in 0 1; do
  line=$(grep "^\[worker:$k\] worker $k: traced one step in $TMP/step_worker$k.json: " "$TMP/four.out")
  if [[ "$line" == *": 8 all-reduces, "*" started during backprop; "*" ms hidden behind backprop ("* ]] &&
     grep -q '"traceEvents":\[' "$TMP/step_worker$k.json" &&
     grep -q '"cat":"CollectiveReduce"' "$TMP/step_worker$k.json"; then
    echo "ok 1b: worker $k's trace: ${line#*: traced one step in }"
  else
    fail "worker $k's traced step: line [$line], file $(head -c 200 "$TMP/step_worker$k.json" 2>&1)"
  fi
done

# 2. A worker whose peer never starts.
read -r P0 P1 < <(free_ports 2)
TF_CONFIG="{\"cluster\": {\"worker\": [\"127.0.0.1:$P0\", \"127.0.0.1:$P1\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}" \
  timeout 120 "$BIN" --epochs=1 --collective_timeout_s=3 >"$TMP/alone.out" 2>"$TMP/alone.err"
RC=$?
if [[ $RC -eq 1 ]] && grep -q "DEADLINE_EXCEEDED" "$TMP/alone.err" &&
   grep -q "/job:worker/replica:0/task:1" "$TMP/alone.err"; then
  echo "ok 2: alone, the worker fails naming task 1: $(head -c 300 "$TMP/alone.err")"
else
  fail "alone: exit $RC, stderr [$(cat "$TMP/alone.err")]"
fi

# 3. A bad flag.
timeout 30 "$BIN" --bogus >"$TMP/bogus.out" 2>&1
RC=$?
[[ $RC -eq 2 ]] && grep -q "usage: multi_worker_fashion_mnist" "$TMP/bogus.out" ||
  fail "--bogus: exit $RC, [$(cat "$TMP/bogus.out")]"
timeout 30 "$BIN" --hidden=64,x >"$TMP/hidden.out" 2>&1
RC=$?
[[ $RC -eq 2 ]] && grep -q "\-\-hidden=64,x: 'x' is not a positive width" "$TMP/hidden.out" ||
  fail "--hidden=64,x: exit $RC, [$(cat "$TMP/hidden.out")]"

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
