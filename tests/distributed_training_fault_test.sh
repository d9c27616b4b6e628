#!/usr/bin/env bash
# Fault injection into examples/distributed_fashion_mnist, run as real ps and
# worker processes on free 127.0.0.1 ports (1 ps + 1 chief unless said):
#  1. a worker started before its ps waits, then trains to --steps once the
#     ps comes up, and prints test_accuracy;
#  2. the ps killed with SIGKILL mid-training and restarted on the same port:
#     the chief's MonitoredTrainingSession recovers, restores the latest
#     checkpoint (its global step >= the one saved before the kill), every
#     step line after the restore is at or above it, the run finishes with
#     test_accuracy and the new ps exits 0 through the done queue;
#  3. (--sync_no_backup) --is_sync with 2 workers and no backup, worker 1
#     killed with SIGKILL wherever it is in its step: the chief exits
#     non-zero within its --sync_timeout_s (15 s here) with an error that
#     says the gradients are missing and names worker 1, instead of hanging;
#  4. (--sync) --is_sync with 3 workers aggregating 2 (one backup): a
#     non-chief killed mid-training, the chief trains on to --steps and ends
#     with test_accuracy;
#  5. (--sync_frozen_ps) --is_sync with 2 workers and checkpoints, the ps
#     stopped with SIGSTOP for 50 s (past the 40 s a task may stay silent)
#     and then continued: both workers notice the silence, recreate their
#     sessions, and finish; the chief restores a checkpoint and ends with
#     test_accuracy, the ps exits 0 through the done queues.
# Every wait is bounded (bounds only, no timing assertions); every process
# started is killed on exit. Without the dataset it reports a skip
# (tests/skip_lib.sh).
#
# Usage: distributed_training_fault_test.sh EXAMPLE CLUSTER_LIB [--sync|--sync_no_backup|--sync_frozen_ps]
set -u
BIN="$1"
TG_SERVER="$BIN"  # cluster_lib's start_server runs the example as one task
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# shellcheck source=tests/cluster_lib.sh
source "$2"
MODE="${3:-}"
# shellcheck source=tests/skip_lib.sh
source "$(dirname "$0")/skip_lib.sh"
skip_without_fashion_mnist

# wait_for FILE REGEX SECONDS [PID]: 0 once a line of FILE matches; 1 when
# the time runs out or PID exits first (after a last look at FILE).
wait_for() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    grep -qE "$2" "$1" 2>/dev/null && return 0
    if [[ -n "${4:-}" ]] && ! kill -0 "$4" 2>/dev/null; then
      grep -qE "$2" "$1" 2>/dev/null
      return
    fi
    sleep 0.1
  done
  return 1
}
# wait_exit_within PID SECONDS: as cluster_lib's wait_exit, another bound.
wait_exit_within() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    if ! kill -0 "$1" 2>/dev/null; then
      wait "$1"
      RC=$?
      return
    fi
    sleep 0.1
  done
  RC=124
}
logs() { echo "stdout [$(tail -n 15 "$TMP/$1.out")] stderr [$(tail -n 15 "$TMP/$1.err")]"; }
finished_with_accuracy() {  # NAME PID: exits 0, last line test_accuracy
  wait_exit_within "$2" 180
  [[ $RC -eq 0 && "$(tail -n 1 "$TMP/$1.out")" =~ ^test_accuracy=0\.[0-9]{4}$ ]]
}

worker_before_ps() {
  local P W
  read -r P W < <(free_ports 2)
  local hosts=(--ps_hosts="127.0.0.1:$P" --worker_hosts="127.0.0.1:$W")
  start_server early_w0 "${hosts[@]}" --job_name=worker --steps=60 --log_every=10
  local w0=$LAST_PID
  wait_for "$TMP/early_w0.err" "serving at 127.0.0.1:$W" 30 "$w0" ||
    { fail "1: the worker did not start: $(logs early_w0)"; return; }
  sleep 3  # the worker is up, its ps is not
  if ! kill -0 "$w0" 2>/dev/null || grep -q "step" "$TMP/early_w0.out"; then
    fail "1: the worker did not wait for its ps: $(logs early_w0)"
    return
  fi
  start_server early_ps "${hosts[@]}" --job_name=ps
  local ps=$LAST_PID
  if finished_with_accuracy early_w0 "$w0"; then
    echo "ok 1: a worker started 3 s before its ps trained once it came: $(grep trained "$TMP/early_w0.out")"
  else
    fail "1: the worker did not finish (exit $RC): $(logs early_w0)"
  fi
  wait_exit_within "$ps" 30
  [[ $RC -eq 0 ]] || fail "1: the ps: exit $RC: $(logs early_ps)"
}

# The global step of the newest checkpoint in DIR (the state file's first line).
checkpointed_step() {
  sed -nE '1s/^model_checkpoint_path: ".*model\.ckpt-([0-9]+)"$/\1/p' "$1/checkpoint" 2>/dev/null
}

ps_killed_and_restarted() {
  local P W ckpt="$TMP/ckpt"
  read -r P W < <(free_ports 2)
  local hosts=(--ps_hosts="127.0.0.1:$P" --worker_hosts="127.0.0.1:$W")
  start_server ps_first "${hosts[@]}" --job_name=ps
  local ps=$LAST_PID
  start_server chief "${hosts[@]}" --job_name=worker --steps=300 --log_every=5 \
    --checkpoint_dir="$ckpt" --save_every=20
  local w0=$LAST_PID
  local i saved=""
  for ((i = 0; i < 1200; i++)); do  # two checkpoints past the first
    saved=$(checkpointed_step "$ckpt")
    [[ -n "$saved" ]] && ((saved >= 60)) && break
    kill -0 "$w0" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n "$saved" ]] && ((saved >= 60)) && kill -0 "$w0" 2>/dev/null ||
    { fail "2: no checkpoint at step 60 or later ('$saved'): $(logs chief)"; return; }
  kill -KILL "$ps"
  wait "$ps" 2>/dev/null
  echo "ps killed with SIGKILL; the newest checkpoint then was at global step $saved"
  sleep 1
  start_server ps_restarted "${hosts[@]}" --job_name=ps
  local ps2=$LAST_PID
  local restored='^MonitoredTrainingSession: restored the variables from .*model\.ckpt-([0-9]+) \(global step ([0-9]+)\)$'
  wait_for "$TMP/chief.err" "$restored" 120 "$w0" ||
    { fail "2: the chief did not restore a checkpoint: $(logs chief)"; return; }
  local before
  before=$(wc -l <"$TMP/chief.out")  # step lines from here are after the restore
  local back
  back=$(sed -nE "s/$restored/\\2/p" "$TMP/chief.err" | head -n 1)
  ((back >= saved)) || fail "2: restored global step $back, below the checkpointed $saved"
  grep -q "^MonitoredTrainingSession: .*recreating the session" "$TMP/chief.err" ||
    fail "2: no recovery message: $(logs chief)"
  if finished_with_accuracy chief "$w0"; then
    echo "ok 2: restored global step $back (checkpointed $saved before the kill); $(grep trained "$TMP/chief.out")"
  else
    fail "2: the chief did not finish after the restart (exit $RC): $(logs chief)"
  fi
  local below
  below=$(tail -n +"$((before + 1))" "$TMP/chief.out" |
    sed -nE 's/^worker 0: step [0-9]+ \(global step ([0-9]+)\).*/\1/p' | awk -v s="$back" '$1 < s' | head -n 1)
  [[ -z "$below" ]] || fail "2: global step $below after restoring $back"
  local last
  last=$(sed -nE 's/^worker 0: trained .* global step now ([0-9]+)$/\1/p' "$TMP/chief.out")
  [[ -n "$last" ]] && ((last >= 300)) || fail "2: the chief ended at global step '${last:-}'"
  wait_exit_within "$ps2" 30
  [[ $RC -eq 0 ]] && grep -q "all 1 workers are done, stopping" "$TMP/ps_restarted.out" ||
    fail "2: the restarted ps: exit $RC: $(logs ps_restarted)"
}

sync_worker_killed_no_backup() {
  local P W0 W1
  read -r P W0 W1 < <(free_ports 3)
  local flags=(--ps_hosts="127.0.0.1:$P" --worker_hosts="127.0.0.1:$W0,127.0.0.1:$W1"
               --is_sync --sync_timeout_s=15 --steps=100000 --log_every=10)
  start_server sync_ps "${flags[@]}" --job_name=ps
  start_server sync_w0 "${flags[@]}" --job_name=worker --task_index=0
  local w0=$LAST_PID
  start_server sync_w1 "${flags[@]}" --job_name=worker --task_index=1
  local w1=$LAST_PID
  wait_for "$TMP/sync_w1.out" "^worker 1: step 30 " 120 "$w1" ||
    { fail "3: the sync workers did not train: $(logs sync_w0) $(logs sync_w1)"; return; }
  kill -KILL "$w1"
  wait "$w1" 2>/dev/null
  echo "worker 1 killed with SIGKILL; waiting (bound: 3 min) for the chief to fail"
  wait_exit_within "$w0" 180
  if [[ $RC -eq 124 ]]; then
    fail "3: the chief still runs 3 min after worker 1 died: $(logs sync_w0)"
  elif [[ $RC -eq 0 ]]; then
    fail "3: the chief exited 0 without worker 1: $(logs sync_w0)"
  elif grep -q "gradients from some workers are missing" "$TMP/sync_w0.err" &&
       grep -qE "none from \[1\]" "$TMP/sync_w0.err" &&
       grep -qE "Worker 1 \(/job:worker(/replica:0)?/task:1\) sent no gradient" "$TMP/sync_w0.err"; then
    echo "ok 3: the chief exited $RC naming the missing worker: $(grep -m1 -o 'gradients from some workers are missing.*' "$TMP/sync_w0.err")"
  else
    fail "3: the chief exited $RC without naming worker 1 as missing: $(logs sync_w0)"
  fi
}

# One backup: 3 workers, 2 gradients per global step; worker 2 dies and the
# chief still reaches --steps.
sync_backup_worker_killed() {
  local P W0 W1 W2
  read -r P W0 W1 W2 < <(free_ports 4)
  local flags=(--ps_hosts="127.0.0.1:$P"
               --worker_hosts="127.0.0.1:$W0,127.0.0.1:$W1,127.0.0.1:$W2"
               --is_sync --replicas_to_aggregate=2 --sync_timeout_s=60 --steps=120 --log_every=10)
  start_server backup_ps "${flags[@]}" --job_name=ps
  start_server backup_w0 "${flags[@]}" --job_name=worker --task_index=0
  local w0=$LAST_PID
  start_server backup_w1 "${flags[@]}" --job_name=worker --task_index=1
  start_server backup_w2 "${flags[@]}" --job_name=worker --task_index=2
  local w2=$LAST_PID
  wait_for "$TMP/backup_w2.out" "^worker 2: step 20 " 120 "$w2" ||
    { fail "4: the sync workers did not train: $(logs backup_w0) $(logs backup_w2)"; return; }
  kill -KILL "$w2"
  wait "$w2" 2>/dev/null
  echo "worker 2 (a backup) killed with SIGKILL; the chief must reach step 120"
  if finished_with_accuracy backup_w0 "$w0"; then
    echo "ok 4: the chief trained on without worker 2: $(grep trained "$TMP/backup_w0.out")"
  else
    fail "4: the chief did not finish: $(logs backup_w0)"
  fi
}

# A frozen ps (SIGSTOP) that comes back: the workers' requests to it hear
# nothing for 40 s and fail Unavailable, the chief's wait at the sync gate
# times out, both sessions are recreated once the ps answers again, and the
# job finishes (docs/sync_replicas.md, "Failures").
sync_ps_frozen() {
  local P W0 W1 ckpt="$TMP/frozen_ckpt"
  read -r P W0 W1 < <(free_ports 3)
  local flags=(--ps_hosts="127.0.0.1:$P" --worker_hosts="127.0.0.1:$W0,127.0.0.1:$W1"
               --is_sync --sync_timeout_s=20 --steps=400 --log_every=20
               --checkpoint_dir="$ckpt" --save_every=50)
  start_server frozen_ps "${flags[@]}" --job_name=ps
  local ps=$LAST_PID
  start_server frozen_w0 "${flags[@]}" --job_name=worker --task_index=0
  local w0=$LAST_PID
  start_server frozen_w1 "${flags[@]}" --job_name=worker --task_index=1
  local w1=$LAST_PID
  wait_for "$TMP/frozen_w0.out" "^worker 0: step [0-9]+ \(global step ([6-9][0-9]|[1-9][0-9]{2,})\)" 120 "$w0" ||
    { fail "5: the sync workers did not train: $(logs frozen_w0) $(logs frozen_w1)"; return; }
  kill -STOP "$ps"
  echo "ps stopped with SIGSTOP at $(grep -c '' "$TMP/frozen_w0.out") chief lines; continuing it in 50 s"
  sleep 50
  kill -CONT "$ps"
  local silent='UNAVAILABLE: .*nothing heard for [0-9.]+s \(the task may be frozen'
  if finished_with_accuracy frozen_w0 "$w0"; then
    echo "ok 5: the chief finished after the freeze: $(grep trained "$TMP/frozen_w0.out")"
  else
    fail "5: the chief did not finish after the freeze (exit $RC): $(logs frozen_w0)"
  fi
  grep -qE "$silent" "$TMP/frozen_w0.err" && grep -q "session recreated" "$TMP/frozen_w0.err" ||
    fail "5: the chief did not notice the frozen ps and recover: $(logs frozen_w0)"
  grep -qE '^MonitoredTrainingSession: restored the variables from ' "$TMP/frozen_w0.err" ||
    fail "5: the chief did not restore a checkpoint: $(logs frozen_w0)"
  local last
  last=$(sed -nE 's/^worker 0: trained .* global step now ([0-9]+)$/\1/p' "$TMP/frozen_w0.out")
  [[ -n "$last" ]] && ((last >= 400)) || fail "5: the chief ended at global step '${last:-}'"
  wait_exit_within "$w1" 120
  [[ $RC -eq 0 ]] && grep -qE '^worker 1: trained .* global step now [0-9]+$' "$TMP/frozen_w1.out" ||
    fail "5: worker 1 did not finish after the freeze (exit $RC): $(logs frozen_w1)"
  grep -qE "$silent" "$TMP/frozen_w1.err" && grep -q "session recreated" "$TMP/frozen_w1.err" ||
    fail "5: worker 1 did not notice the frozen ps and recover: $(logs frozen_w1)"
  wait_exit_within "$ps" 60
  [[ $RC -eq 0 ]] && grep -q "all 2 workers are done, stopping" "$TMP/frozen_ps.out" ||
    fail "5: the ps: exit $RC: $(logs frozen_ps)"
}

if [[ "$MODE" == "--sync" ]]; then
  sync_backup_worker_killed
elif [[ "$MODE" == "--sync_no_backup" ]]; then
  sync_worker_killed_no_backup
elif [[ "$MODE" == "--sync_frozen_ps" ]]; then
  sync_ps_frozen
else
  worker_before_ps
  ps_killed_and_restarted
fi

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
