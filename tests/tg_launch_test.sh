#!/bin/bash
# tg_launch starts a 1-ps/2-worker cluster of tg_server processes on free
# loopback ports and runs a command against it:
#
#   /job:ps/task:0          /job:worker/task:0        /job:worker/task:1
#   x, y (variables) ══x,y══► z1b = x·y + x ══z1b══► z2b = z1b·x + x
#                                   ▲
#                      tg_run --target=grpc://worker 0 (from TG_CLUSTER)
#
# Also: the command's exit status comes back, no tg_server outlives the
# launcher, and a bad --cluster fails with its message. Every run is bounded
# by `timeout`; an EXIT trap kills every task pid the launcher printed.
#
# Usage: tg_launch_test.sh TG_LAUNCH TG_SERVER TG_RUN  (Bazel passes the rootpaths.)
set -u

RUNFILES="${TEST_SRCDIR:-$PWD}/tensorgrid"
TG_LAUNCH="${1:-$RUNFILES/tools/tg_launch}"
TG_SERVER="${2:-$RUNFILES/tools/tg_server}"
TG_RUN="${3:-$RUNFILES/tools/tg_run}"
GRAPH="$RUNFILES/tests/testdata/seed_placement.pbtxt"
[[ -f "$GRAPH" ]] || GRAPH="tests/testdata/seed_placement.pbtxt"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# Absolute paths: the command runs from the same directory, but be explicit.
TG_RUN="$(cd "$(dirname "$TG_RUN")" && pwd)/$(basename "$TG_RUN")"
GRAPH="$(cd "$(dirname "$GRAPH")" && pwd)/$(basename "$GRAPH")"
export TG_RUN GRAPH

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# The task pids every launch printed ("pid TASK PID"); killed on exit.
task_pids() { awk '/^pid \/job:/ {print $3}' "$TMP"/*.out 2>/dev/null; }
cleanup() {
  local pid
  for pid in $(task_pids); do kill -KILL "$pid" 2>/dev/null; done
}
trap cleanup EXIT

# launch NAME ARGS...: runs tg_launch (at most 120 s) with stdout in
# $TMP/NAME.out and stderr in $TMP/NAME.err; sets $RC.
launch() {
  local name="$1"
  shift
  timeout -k 5 120 "$TG_LAUNCH" --server_binary="$TG_SERVER" "$@" \
    >"$TMP/$name.out" 2>"$TMP/$name.err"
  RC=$?
}

# (1) The seed example through worker 0. TG_CLUSTER is
# "ps=localhost:P;worker=localhost:W0,localhost:W1": worker 0 is the first
# address after "worker=", up to the next ',' or ';'.
launch seed --ps=1 --workers=2 -- sh -c '
  w0="${TG_CLUSTER#*worker=}"
  w0="${w0%%[,;]*}"
  echo "worker0 $w0"
  echo "tf_config $TF_CONFIG"
  "$TG_RUN" --target="grpc://$w0" --graph="$GRAPH" --run=x/Assign,y/Assign --fetch=z2b'
[[ $RC -eq 0 ]] || fail "seed: exit status $RC, stderr: $(cat "$TMP/seed.err")"
grep -qx "z2b float \[2,2\] \[\[7,7\],\[7,7\]\]" "$TMP/seed.out" ||
  fail "seed: no z2b in stdout [$(cat "$TMP/seed.out")] stderr [$(cat "$TMP/seed.err")]"
grep -q "^cluster: ps=localhost:[0-9]*;worker=localhost:[0-9]*,localhost:[0-9]*$" "$TMP/seed.out" ||
  fail "seed: no cluster line in [$(cat "$TMP/seed.out")]"
for task in /job:ps/replica:0/task:0 /job:worker/replica:0/task:0 /job:worker/replica:0/task:1; do
  grep -q "^target $task grpc://127.0.0.1:[0-9]*$" "$TMP/seed.out" ||
    fail "seed: no target line for $task in [$(cat "$TMP/seed.out")]"
done
grep -q "^\[ps:0\] tg_server ready /job:ps/replica:0/task:0 " "$TMP/seed.out" ||
  fail "seed: no prefixed ready line for ps:0 in [$(cat "$TMP/seed.out")]"
grep -q '^tf_config .*"task":{"type":"worker","index":0}' "$TMP/seed.out" ||
  fail "seed: TF_CONFIG [$(grep tf_config "$TMP/seed.out")]"

# (2) The command's exit status is tg_launch's.
launch exit3 --workers=1 -- sh -c 'exit 3'
[[ $RC -eq 3 ]] || fail "exit 3: exit status $RC, stderr: $(cat "$TMP/exit3.err")"

# (3) No task outlives its launcher: every pid printed is gone (tg_launch
# waited for each, so a pid still alive would be a leaked server).
[[ -n "$(task_pids)" ]] || fail "no pid lines printed"
for pid in $(task_pids); do
  if kill -0 "$pid" 2>/dev/null && grep -q tg_server "/proc/$pid/cmdline" 2>/dev/null; then
    fail "tg_server pid $pid still runs after tg_launch exited"
  fi
done

# (4) A bad --cluster: exit status 1 and the reason.
launch bad --cluster="ps=localhost:99999"
[[ $RC -eq 1 ]] || fail "bad --cluster: exit status $RC"
grep -q "INVALID_ARGUMENT: --cluster: .*localhost:99999" "$TMP/bad.err" ||
  fail "bad --cluster: stderr [$(cat "$TMP/bad.err")]"

# (5) A task that cannot start (its port is taken by a running task of
# another launch): its error lines are shown, named, and the launch fails.
launch busy --workers=1 -- sh -c '
  "$0" --server_binary="$1" --cluster="${TG_CLUSTER}" -- true' "$TG_LAUNCH" "$TG_SERVER"
[[ $RC -eq 1 ]] || fail "port in use: exit status $RC, stderr: $(cat "$TMP/busy.err")"
grep -q "^\[worker:0\] error: UNAVAILABLE: .*cannot listen on" "$TMP/busy.err" ||
  fail "port in use: no task error in [$(cat "$TMP/busy.err")]"
grep -q "^tg_launch: task /job:worker/replica:0/task:0 exited with status 1$" "$TMP/busy.err" ||
  fail "port in use: task not named in [$(cat "$TMP/busy.err")]"

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
