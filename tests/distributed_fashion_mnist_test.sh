#!/usr/bin/env bash
# examples/distributed_fashion_mnist, between-graph replication with real
# processes: examples/run_distributed_fashion_mnist.sh runs 2 ps + 2 workers
# on free 127.0.0.1 ports for 300 asynchronous global steps. Both workers
# train the one model (their steps add up to the global step), the chief's
# last line is test_accuracy=0.xxxx, the chief alone writes --logdir's
# event files, each worker writes --trace_dir's Chrome traces, and every task exits 0 by itself (the
# ps tasks once both workers' done tokens are in their queues). Then the same with --is_sync for 60 steps (two
# worker steps per global step), a ps stopped by SIGTERM
# before the workers are done exits 0, bad flags are usage errors.
# Every wait is bounded; every process started is killed on exit. Without
# Debian's dataset-fashion-mnist package it reports a skip (tests/skip_lib.sh).
#
# Usage: distributed_fashion_mnist_test.sh EXAMPLE RUN_SCRIPT CLUSTER_LIB
set -u
BIN="$1"
RUN_SCRIPT="$2"
TG_SERVER="$BIN"  # cluster_lib's start_server runs the example as a lone task
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# shellcheck source=tests/cluster_lib.sh
source "$3"
# shellcheck source=tests/skip_lib.sh
source "$(dirname "$0")/skip_lib.sh"
skip_without_fashion_mnist
holds() { awk "BEGIN { exit !(($1) $2 ($3)) }" </dev/null; }

# 1. The whole cluster, asynchronous.
LOGS="$TMP/run"
BIN="$BIN" TIMEOUT=240 GRACE=30 LOG_DIR="$LOGS" timeout 300 bash "$RUN_SCRIPT" \
  --steps=300 --log_every=10 --logdir="$TMP/tb" --trace_dir="$TMP/traces" \
  >"$TMP/run.out" 2>"$TMP/run.err"
RC=$?
[[ $RC -eq 0 ]] || fail "run: exit status $RC; stderr: $(tail -n 30 "$TMP/run.err")"
for task in ps:0 ps:1 worker:0 worker:1; do
  grep -q "^run_distributed_fashion_mnist: $task exited with status 0$" "$TMP/run.err" ||
    fail "$task did not exit 0 by itself: $(grep "$task exited" "$TMP/run.err")"
done
for ps in 0 1; do
  grep -q "^/job:ps/replica:0/task:$ps: all 2 workers are done, stopping$" "$LOGS/ps$ps.out" ||
    fail "ps $ps did not end through the done queue: [$(cat "$LOGS/ps$ps.out")]"
done

# --trace_dir: each worker's traced steps, its own nodes and the ps tasks'
# (the ps applies each gradient as it arrives).
for w in 0 1; do
  trace=$(ls "$TMP/traces/worker$w"/timeline-*.json 2>/dev/null | head -1)
  if [[ -n "$trace" ]] && grep -q '"cat":"ApplyAdam"' "$trace" &&
    grep -q '"name":"/job:ps/replica:0/task:1/device:CPU:0"' "$trace" &&
    grep -q "\"name\":\"/job:worker/replica:0/task:$w/device:CPU:0\"" "$trace"; then
    :
  else
    fail "worker $w's trace [$trace]: $(ls -R "$TMP/traces" 2>&1 | head)"
  fi
done

# One model, trained by both: each worker took steps, and every step of
# either moved the one global step on the ps, so the later of the two
# "global step now" (read after each worker's last step) is the sum of their
# steps. How the two workers' steps fell in time is the scheduler's business.
steps=()
now=()
for w in 0 1; do
  line=$(grep "^worker $w: trained" "$LOGS/worker$w.out")
  if [[ "$line" =~ trained\ ([0-9]+)\ steps.*global\ step\ now\ ([0-9]+)$ ]]; then
    steps+=("${BASH_REMATCH[1]}")
    now+=("${BASH_REMATCH[2]}")
  else
    fail "worker $w: no trained line: '$line'"
  fi
done
if ((${#steps[@]} == 2)); then
  final=$((now[0] > now[1] ? now[0] : now[1]))
  if ((steps[0] > 0 && steps[1] > 0 && steps[0] + steps[1] == final && now[0] >= 300)); then
    echo "ok: workers took ${steps[0]} + ${steps[1]} steps, global step $final"
  else
    fail "workers took ${steps[0]} and ${steps[1]} steps; global step now ${now[0]} and ${now[1]}"
  fi
fi

# The chief's last line, and the script's, is the accuracy.
chief_last=$(tail -n 1 "$LOGS/worker0.out")
if [[ "$chief_last" =~ ^test_accuracy=(0\.[0-9]{4})$ ]] && holds "${BASH_REMATCH[1]}" '>' 0.6; then
  echo "ok: the chief's last line is $chief_last"
else
  fail "the chief's last line is not test_accuracy above 0.6: '$chief_last'"
fi
[[ "$(tail -n 1 "$TMP/run.out")" == "$chief_last" ]] || fail "the script's last line: $(tail -n 1 "$TMP/run.out")"
grep -q "test_accuracy" "$LOGS/worker1.out" && fail "worker 1 printed an accuracy"

# --logdir: the chief alone wrote one event file (tests/tfevents.py reads
# it): loss, accuracy and global_step/sec at rising global steps.
files=("$TMP"/tb/events.out.tfevents.*)
scalars=$(/usr/bin/python3 "$(dirname "$0")/tfevents.py" "$TMP/tb" 2>&1)
if ((${#files[@]} == 1)) && awk '
    $2 == "loss" { if (!($3 > 0) || $1 <= last) bad = 1; last = $1; n++ }
    $2 == "accuracy" { if (!($3 >= 0 && $3 <= 1)) bad = 1; a++ }
    $2 == "global_step/sec" { if (!($3 > 0)) bad = 1; r++ }
    END { exit !(!bad && n >= 10 && a == n && r == n - 1 && last <= 310) }' <<<"$scalars"; then
  echo "ok: --logdir: the chief's event file has $(grep -c ' loss ' <<<"$scalars") steps of loss and accuracy"
else
  fail "--logdir: files [${files[*]}], scalars [$scalars]"
fi

# 2. --is_sync: every global step averages two gradients, the first two sent
#    for it, so the workers' steps add up to about twice the global steps
#    (a worker may take a few more than the other), and both take part.
BIN="$BIN" TIMEOUT=240 GRACE=30 LOG_DIR="$TMP/sync" timeout 300 bash "$RUN_SCRIPT" \
  --steps=60 --log_every=20 --is_sync >"$TMP/sync.out" 2>"$TMP/sync.err"
RC=$?
[[ $RC -eq 0 ]] && grep -q "^run_distributed_fashion_mnist: every task exited 0$" "$TMP/sync.err" ||
  fail "--is_sync run: exit status $RC; stderr: $(tail -n 30 "$TMP/sync.err")"
total=0
for w in 0 1; do
  line=$(grep "^worker $w: trained" "$TMP/sync/worker$w.out")
  if [[ "$line" =~ trained\ ([0-9]+)\ steps.*global\ step\ now\ ([0-9]+)$ ]] &&
     ((BASH_REMATCH[2] >= 60 && BASH_REMATCH[1] >= 40)); then
    total=$((total + BASH_REMATCH[1]))
  else
    fail "--is_sync worker $w: '$line'"
  fi
done
if ((total >= 120 && total <= 126)); then
  echo "ok: --is_sync: the workers took $total steps for 60 global steps"
else
  fail "--is_sync: the workers took $total steps for 60 global steps"
fi
[[ "$(tail -n 1 "$TMP/sync.out")" =~ ^test_accuracy=0\.[0-9]{4}$ ]] ||
  fail "--is_sync: the last line is '$(tail -n 1 "$TMP/sync.out")'"
read -r P0 W0 < <(free_ports 2)

# 3. A ps whose workers never come: SIGTERM stops it gracefully (exit 0).
start_server lone_ps --ps_hosts="127.0.0.1:$P0" --worker_hosts="127.0.0.1:$W0" --job_name=ps
PS_PID=$LAST_PID
for ((i = 0; i < 300; i++)); do
  grep -q "serving at 127.0.0.1:$P0" "$TMP/lone_ps.err" && break
  sleep 0.1
done
sleep 1  # into its wait for the done tokens
kill -TERM "$PS_PID"
wait_exit "$PS_PID"
[[ $RC -eq 0 ]] && grep -q "Terminated before every worker was done" "$TMP/lone_ps.err" ||
  fail "ps after SIGTERM: exit $RC, stderr [$(cat "$TMP/lone_ps.err")]"

# 4. Bad command lines: exit 2 with the usage.
for args in "--job_name=ps" "--ps_hosts=127.0.0.1:1 --worker_hosts=127.0.0.1:2" "--steps=0" "--bogus"; do
  # shellcheck disable=SC2086
  timeout 30 "$BIN" $args >"$TMP/usage.out" 2>&1
  RC=$?
  [[ $RC -eq 2 ]] && grep -q "usage: distributed_fashion_mnist" "$TMP/usage.out" ||
    fail "'$args': exit $RC, [$(cat "$TMP/usage.out")]"
done

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
