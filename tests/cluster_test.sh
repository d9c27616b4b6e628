#!/bin/bash
# A real three-process cluster on loopback: tg_server for /job:ps/task:0,
# /job:worker/task:0 and /job:worker/task:1 on free ports, then tg_run
# against grpc://worker 0 runs the seed example (tests/testdata/
# seed_placement.pbtxt):
#
#   /job:ps/task:0          /job:worker/task:0        /job:worker/task:1
#   x, y (variables) ══x,y══► z1b = x·y + x ══z1b══► z2b = z1b·x + x
#
# Also: a task started with TF_CONFIG instead of flags (and the bulk port
# off by TG_BULK_TRANSFER=0), a second server on a port in use, a bad
# TG_BULK_TRANSFER, a bad --request_timeout_seconds, and SIGTERM/SIGINT
# stopping every server with exit status 0; tg_run --config shortening the
# wait for a task that never starts.
# Every wait is bounded; an EXIT trap kills whatever is left.
#
# Usage: cluster_test.sh TG_SERVER TG_RUN CLUSTER_LIB  (Bazel passes the rootpaths.)
set -u

RUNFILES="${TEST_SRCDIR:-$PWD}/tensorgrid"
TG_SERVER="${1:-$RUNFILES/tools/tg_server}"
TG_RUN="${2:-$RUNFILES/tools/tg_run}"
GRAPH="$RUNFILES/tests/testdata/seed_placement.pbtxt"
[[ -f "$GRAPH" ]] || GRAPH="tests/testdata/seed_placement.pbtxt"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"

# shellcheck source=tests/cluster_lib.sh
source "$3"

read -r PS W0 W1 < <(free_ports 3)
CLUSTER="ps=127.0.0.1:$PS;worker=127.0.0.1:$W0,127.0.0.1:$W1"

start_server ps --cluster="$CLUSTER" --job_name=ps --task_index=0
PS_PID=$LAST_PID
start_server worker0 --cluster="$CLUSTER" --job_name=worker --task_index=0
W0_PID=$LAST_PID
# Worker 1 from TF_CONFIG, as TensorFlow's launchers start tasks.
TF_CONFIG="{\"cluster\": {\"ps\": [\"127.0.0.1:$PS\"],
            \"worker\": [\"127.0.0.1:$W0\", \"127.0.0.1:$W1\"]},
            \"task\": {\"type\": \"worker\", \"index\": 1}}" TG_BULK_TRANSFER=0 start_server worker1
W1_PID=$LAST_PID

wait_ready ps "$PS_PID" || exit 1
wait_ready worker0 "$W0_PID" || exit 1
wait_ready worker1 "$W1_PID" || exit 1
[[ "$(cat "$TMP/ps.out")" == "tg_server ready /job:ps/replica:0/task:0 127.0.0.1:$PS" ]] ||
  fail "ps ready line: [$(cat "$TMP/ps.out")]"
[[ "$(cat "$TMP/worker1.out")" == "tg_server ready /job:worker/replica:0/task:1 127.0.0.1:$W1" ]] ||
  fail "worker1 ready line: [$(cat "$TMP/worker1.out")]"

# The seed example, twice: variables live on the ps across client sessions.
for run in first second; do
  OUT="$(timeout 60 "$TG_RUN" --target="grpc://127.0.0.1:$W0" --graph="$GRAPH" \
    --run=x/Assign,y/Assign --fetch=z2b 2>"$TMP/tg_run.err")"
  RC=$?
  [[ $RC -eq 0 ]] || fail "$run tg_run: exit status $RC, stderr: $(cat "$TMP/tg_run.err")"
  [[ "$OUT" == "z2b float [2,2] [[7,7],[7,7]]" ]] || fail "$run tg_run: stdout [$OUT]"
done

# A second server on worker 0's port: a clear error, exit status 1.
timeout 30 "$TG_SERVER" --cluster="$CLUSTER" --job_name=worker --task_index=0 \
  >"$TMP/dup.out" 2>"$TMP/dup.err"
RC=$?
[[ $RC -eq 1 ]] || fail "second server on a port in use: exit status $RC"
grep -q "UNAVAILABLE: .*cannot listen on 127.0.0.1:$W0" "$TMP/dup.err" ||
  fail "second server on a port in use: stderr [$(cat "$TMP/dup.err")]"
[[ ! -s "$TMP/dup.out" ]] || fail "second server printed [$(cat "$TMP/dup.out")]"

# A bad TG_BULK_TRANSFER is an error naming it, not a guess.
TG_BULK_TRANSFER=maybe timeout 30 "$TG_SERVER" --cluster="worker=127.0.0.1:0" \
  --job_name=worker >"$TMP/bulk.out" 2>"$TMP/bulk.err"
RC=$?
[[ $RC -eq 1 ]] || fail "TG_BULK_TRANSFER=maybe: exit status $RC"
grep -q "INVALID_ARGUMENT: TG_BULK_TRANSFER='maybe' is not true, false, 1 or 0" "$TMP/bulk.err" ||
  fail "TG_BULK_TRANSFER=maybe: stderr [$(cat "$TMP/bulk.err")]"

# A negative --request_timeout_seconds is a usage error naming it.
timeout 30 "$TG_SERVER" --cluster="worker=127.0.0.1:0" --job_name=worker \
  --request_timeout_seconds=-1 >"$TMP/timeout.out" 2>"$TMP/timeout.err"
RC=$?
[[ $RC -eq 2 ]] || fail "--request_timeout_seconds=-1: exit status $RC"
grep -q -- "--request_timeout_seconds='-1' is not a number of seconds" "$TMP/timeout.err" ||
  fail "--request_timeout_seconds=-1: stderr [$(cat "$TMP/timeout.err")]"

# --config configures the task's devices; one that is not a ConfigProto is a
# usage error naming the flag.
timeout 30 "$TG_SERVER" --cluster="worker=127.0.0.1:0" --job_name=worker \
  --config='intra_op_parallelism_threadz: 2' >"$TMP/config.out" 2>"$TMP/config.err"
RC=$?
[[ $RC -eq 2 ]] || fail "--config with a typo: exit status $RC"
grep -q -- "--config is not a ConfigProto in text format: .*intra_op_parallelism_threadz" \
  "$TMP/config.err" || fail "--config with a typo: stderr [$(cat "$TMP/config.err")]"
start_server configured --cluster="worker=127.0.0.1:0" --job_name=worker \
  --config='intra_op_parallelism_threads: 1 inter_op_parallelism_threads: 1'
CONFIGURED_PID=$LAST_PID
wait_ready configured "$CONFIGURED_PID" || exit 1
kill -TERM "$CONFIGURED_PID"
wait_exit "$CONFIGURED_PID"
[[ $RC -eq 0 ]] || fail "server with --config after SIGTERM: exit status $RC"

# A task that never starts: tg_run's --config shortens the master's wait
# for it (operation_timeout_in_ms, 60 s by default) and the error names it.
read -r LONE ABSENT < <(free_ports 2)
start_server lone --cluster="worker=127.0.0.1:$LONE,127.0.0.1:$ABSENT" --job_name=worker \
  --task_index=0
LONE_PID=$LAST_PID
wait_ready lone "$LONE_PID" || exit 1
timeout 30 "$TG_RUN" --target="grpc://127.0.0.1:$LONE" --graph="$GRAPH" --run=x/Assign \
  --config='operation_timeout_in_ms: 1500' >"$TMP/absent.out" 2>"$TMP/absent.err"
RC=$?
[[ $RC -eq 1 ]] || fail "tg_run with a task missing: exit status $RC"
grep -q "UNAVAILABLE: .*cannot reach 1 of 2 tasks after 1500 ms: .*/job:worker/replica:0/task:1" \
  "$TMP/absent.err" || fail "tg_run with a task missing: stderr [$(cat "$TMP/absent.err")]"
kill -TERM "$LONE_PID"
wait_exit "$LONE_PID"
[[ $RC -eq 0 ]] || fail "lone server after SIGTERM: exit status $RC"

# Graceful stops: SIGTERM for two, SIGINT for one; each exits 0.
kill -TERM "$PS_PID" "$W0_PID"
kill -INT "$W1_PID"
for pid in "$PS_PID" "$W0_PID" "$W1_PID"; do
  wait_exit "$pid"
  [[ $RC -eq 0 ]] || fail "server $pid after a signal: exit status $RC"
done

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
