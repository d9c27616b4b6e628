#!/usr/bin/env bash
# examples/in_graph_replication under one tg_launch command: 2 ps + 2 worker
# tg_server tasks on free loopback ports, the example as the command (one
# client, a tower per worker) for 150 steps. tg_launch exits 0 by itself
# once the example is done, with every task stopped; the example's last
# line is test_accuracy=0.xxxx. Without a cluster the example names
# TF_CONFIG. Bounded waits; every task left over is killed on exit. Without
# Debian's dataset-fashion-mnist package it reports a skip (tests/skip_lib.sh).
#
# Usage: in_graph_replication_test.sh TG_LAUNCH TG_SERVER EXAMPLE
set -u
TG_LAUNCH="$1"
TG_SERVER="$2"
BIN="$3"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# shellcheck source=tests/skip_lib.sh
source "$(dirname "$0")/skip_lib.sh"
skip_without_fashion_mnist
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
holds() { awk "BEGIN { exit !(($1) $2 ($3)) }" </dev/null; }
TASK_PIDS=()
kill_tasks() {
  local pid
  for pid in "${TASK_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
}
trap kill_tasks EXIT

timeout 300 "$TG_LAUNCH" --server_binary="$TG_SERVER" --ps=2 --workers=2 -- \
  "$BIN" --steps=150 --log_every=50 >"$TMP/launch.out" 2>"$TMP/launch.err"
RC=$?
read -r -a TASK_PIDS < <(sed -nE 's/^pid \S+ ([0-9]+)$/\1/p' "$TMP/launch.out" | xargs)
[[ $RC -eq 0 ]] || fail "tg_launch: exit status $RC; stderr: $(tail -n 30 "$TMP/launch.err")"
[[ ${#TASK_PIDS[@]} -eq 4 ]] || fail "expected 4 task pids: [$(cat "$TMP/launch.out")]"
for pid in "${TASK_PIDS[@]}"; do
  kill -0 "$pid" 2>/dev/null && fail "task $pid still runs after tg_launch exited"
done
grep -q "^step 150/150, loss " "$TMP/launch.out" || fail "no progress line for step 150: [$(cat "$TMP/launch.out")]"
last=$(tail -n 1 "$TMP/launch.out")
if [[ "$last" =~ ^test_accuracy=(0\.[0-9]{4})$ ]] && holds "${BASH_REMATCH[1]}" '>' 0.6; then
  echo "ok: the last line is $last"
else
  fail "the last line is not test_accuracy above 0.6: '$last'"
fi
grep -q "trained 150 steps of 2 towers" "$TMP/launch.out" || fail "not 2 towers: [$(cat "$TMP/launch.out")]"

# Without a cluster: exit 1 naming TF_CONFIG; a bad flag: exit 2.
env -u TF_CONFIG timeout 30 "$BIN" >"$TMP/none.out" 2>&1
RC=$?
[[ $RC -eq 1 ]] && grep -q "TF_CONFIG" "$TMP/none.out" || fail "no cluster: exit $RC, [$(cat "$TMP/none.out")]"
timeout 30 "$BIN" --bogus >"$TMP/bogus.out" 2>&1
RC=$?
[[ $RC -eq 2 ]] && grep -q "usage: in_graph_replication" "$TMP/bogus.out" ||
  fail "--bogus: exit $RC, [$(cat "$TMP/bogus.out")]"

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
