#!/bin/bash
# Links cut in the middle of training across simulated hosts (issue 22, item
# 7b and 7c): examples/distributed_fashion_mnist as 1 ps + 2 workers, each in
# a network namespace of its own (tests/netns_lib.sh), bound to its own
# address on port 2222:
#
#  1. Synchronous training (--is_sync --sync_timeout_s=10), worker 1's link
#     cut (`ip link set eth0 down` in its namespace): the chief fails with
#     DEADLINE_EXCEEDED naming worker 1 as the one that sent no gradient,
#     within a minute.
#  2. Asynchronous training, worker 1's link cut: the chief carries on (its
#     global step keeps rising while the link is down); worker 1, stuck, is
#     killed, the link comes back, and worker 1 restarted rejoins: it trains
#     steps of its own, and every task exits 0 with the chief's accuracy.
#  3. Asynchronous training with checkpoints, the ps's link cut: the chief's
#     step fails UNAVAILABLE, the link comes back, and MonitoredTrainingSession
#     recreates the session, restores the last checkpoint and trains to the
#     end, as docs/monitored_session.md promises; every task exits 0.
#
# Needs root (skips otherwise). Every wait is bounded; an EXIT trap kills
# every task and deletes the namespaces.
#
# Usage: netns_recovery_test.sh DISTRIBUTED_EXAMPLE CLUSTER_LIB SKIP_LIB NETNS_LIB
set -u
DIST="$1"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# shellcheck source=tests/cluster_lib.sh
source "$2"
# shellcheck source=tests/skip_lib.sh
source "$3"
# shellcheck source=tests/netns_lib.sh
source "$4"

skip_without_fashion_mnist
trap 'kill_servers; netns_delete' EXIT
holds() { awk "BEGIN { exit !(($1) $2 ($3)) }" </dev/null; }

netns_hosts ps w0 w1
declare -A PID

# task HOST NAME JOB INDEX FLAGS...: the example inside HOST's namespace,
# line-buffered, in the background (ip netns exec and stdbuf exec it, so
# the PID is the example's own); output in $TMP/NAME.out.
task() {
  local host=$1 name=$2 job=$3 index=$4
  shift 4
  ip netns exec "${NS[$host]}" stdbuf -oL "$DIST" --ps_hosts="${ADDR[ps]}:2222" \
    --worker_hosts="${ADDR[w0]}:2222,${ADDR[w1]}:2222" --job_name="$job" --task_index="$index" \
    "$@" >"$TMP/$name.out" 2>&1 &
  PID[$name]=$!
  PIDS+=($!)
}
# cluster PREFIX FLAGS...: ps, worker 0 and worker 1 as PREFIX-ps, -w0, -w1.
cluster() {
  local p=$1
  shift
  task ps "$p-ps" ps 0 "$@"
  task w0 "$p-w0" worker 0 "$@"
  task w1 "$p-w1" worker 1 "$@"
}
# global_step NAME: the last global step NAME's progress lines name (0: none yet).
global_step() {
  local g
  g=$(sed -nE 's/^worker [0-9]+: step [0-9]+ \(global step ([0-9]+)\).*/\1/p' "$TMP/$1.out" | tail -1)
  echo "${g:-0}"
}
step_at_least() { (($(global_step "$1") >= $2)); }
exited() { ! kill -0 "${PID[$1]}" 2>/dev/null; }
# finish NAME...: waits up to 240 s for each task; a failure for each that
# did not exit 0 (124: still running; the EXIT trap kills it).
finish() {
  local n
  for n in "$@"; do
    wait_exit "${PID[$n]}" 240
    ((RC == 0)) || fail "$n exited $RC: [$(tail -n 5 "$TMP/$n.out")]"
  done
}
link() { ip -n "${NS[$1]}" link set eth0 "$2" || fail "link $2 on $1"; }

# 1. Sync: worker 1's link cut.
PIDS=()
cluster sync --is_sync --sync_timeout_s=10 --steps=100000 --log_every=20
until_true 120 step_at_least sync-w0 40 || fail "sync: the chief never reached global step 40"
link w1 down
cut=$SECONDS
wait_exit "${PID[sync-w0]}" 90
rc=$RC
took=$((SECONDS - cut))
if ((rc != 0)) && grep -q "DEADLINE_EXCEEDED" "$TMP/sync-w0.out" &&
  grep -q "none from \[1\]" "$TMP/sync-w0.out" && ((took <= 60)); then
  echo "ok 1: sync, worker 1 cut off: the chief failed after ${took} s: $(grep -m1 -o "gradients from some workers are missing.*none from \[1\]" "$TMP/sync-w0.out")"
else
  fail "sync, worker 1 cut off: chief exit $rc after ${took} s: [$(tail -n 5 "$TMP/sync-w0.out")]"
fi
kill_servers
until_true 30 exited sync-ps && until_true 30 exited sync-w1 || fail "sync: tasks survived SIGKILL"
link w1 up

# 2. Async: worker 1's link cut, the chief carries on, worker 1 restarted rejoins.
PIDS=()
cluster async --steps=4000 --log_every=100
until_true 120 step_at_least async-w0 300 || fail "async: the chief never reached global step 300"
link w1 down
before=$(global_step async-w0)
until_true 60 step_at_least async-w0 $((before + 300)) ||
  fail "async: the chief stopped at global step $before when worker 1's link was cut"
echo "ok 2: async, worker 1 cut off: the chief went on from global step $before to $(global_step async-w0)"
kill -KILL "${PID[async-w1]}"
until_true 30 exited async-w1 || fail "async: worker 1 survived SIGKILL"
link w1 up
task w1 async-w1-restarted worker 1 --steps=4000 --log_every=100
finish async-ps async-w0 async-w1-restarted
rejoined=$(grep -c "^worker 1: step " "$TMP/async-w1-restarted.out")
accuracy=$(sed -nE 's/^test_accuracy=([0-9.]+)$/\1/p' "$TMP/async-w0.out")
if ((rejoined > 0)) && [[ -n "$accuracy" ]] && holds "$accuracy" '>' 0.6; then
  echo "ok 2: worker 1 restarted rejoined ($(grep "^worker 1: step " "$TMP/async-w1-restarted.out" | tail -1)); test_accuracy=$accuracy"
else
  fail "async: restarted worker 1 [$(tail -n 3 "$TMP/async-w1-restarted.out")], chief [$(tail -n 3 "$TMP/async-w0.out")]"
fi

# 3. The ps's link cut: recovery from the last checkpoint.
PIDS=()
cluster ckpt --steps=3000 --log_every=100 --checkpoint_dir="$TMP/ckpt" --save_every=200
until_true 120 step_at_least ckpt-w0 500 || fail "ps cut: the chief never reached global step 500"
link ps down
until_true 120 grep -q "step failed (UNAVAILABLE" "$TMP/ckpt-w0.out" ||
  fail "ps cut: the chief's step never failed: [$(tail -n 5 "$TMP/ckpt-w0.out")]"
link ps up
finish ckpt-ps ckpt-w0 ckpt-w1
restored=$(grep -o "restored the variables from .* (global step [0-9]*)" "$TMP/ckpt-w0.out" | tail -1)
accuracy=$(sed -nE 's/^test_accuracy=([0-9.]+)$/\1/p' "$TMP/ckpt-w0.out")
if grep -q "session recreated" "$TMP/ckpt-w0.out" && [[ -n "$restored" ]] &&
  [[ -n "$accuracy" ]] && holds "$accuracy" '>' 0.6; then
  echo "ok 3: the ps cut off and back: the chief $restored and finished, test_accuracy=$accuracy"
else
  fail "ps cut: chief [$(grep -E "MonitoredTrainingSession|test_accuracy" "$TMP/ckpt-w0.out" | tail -n 8)]"
fi

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
