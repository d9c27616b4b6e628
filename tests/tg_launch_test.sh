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
# launcher, a bad --cluster fails with its message, a task whose port is
# taken is named; the cluster from a TF_CONFIG-style file and bad or missing
# files; Ctrl-C, a task killed while the cluster runs, tasks never ready
# (stand-in servers that only sleep) and Ctrl-C while starting. Every run
# and every wait is bounded; an EXIT trap kills every process started.
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

# The task pids every launch printed ("pid TASK PID"), the launchers run in
# the background and the stand-in servers of (10) and (11); all killed on exit.
task_pids() { awk '/^pid \/job:/ {print $3}' "$TMP"/*.out 2>/dev/null; }
BG_PIDS=()
cleanup() {
  local pid
  for pid in $(task_pids) "${BG_PIDS[@]}" $(cat "$TMP/fake.pids" 2>/dev/null); do
    kill -KILL "$pid" 2>/dev/null
  done
}
trap cleanup EXIT

# free_ports N: N distinct loopback ports nobody listens on right now,
# below the kernel's ephemeral range (free_ports.py says why).
FREE_PORTS_PY="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/free_ports.py"
free_ports() { python3 "$FREE_PORTS_PY" "$1"; }

# running PID: the process exists and is not a zombie (a background child
# stays a zombie until `wait`, and kill -0 still succeeds on it).
running() {
  local state
  state="$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" && [[ -n "$state" && "$state" != Z ]]
}

# launch_bg NAME ARGS...: tg_launch in the background, output as for
# launch; sets BG_PID.
launch_bg() {
  local name="$1"
  shift
  "$TG_LAUNCH" --server_binary="${SERVER:-$TG_SERVER}" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  BG_PID=$!
  BG_PIDS+=("$BG_PID")
}

# wait_line FILE REGEX: up to 60 s for a line of FILE to match.
wait_line() {
  local i
  for ((i = 0; i < 600; i++)); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# wait_exit PID: up to 60 s for a background launcher to exit; sets RC
# (124 if it still runs: then it is killed).
wait_exit() {
  local i
  for ((i = 0; i < 600; i++)); do
    if ! running "$1"; then
      wait "$1"
      RC=$?
      return
    fi
    sleep 0.1
  done
  kill -KILL "$1" 2>/dev/null
  RC=124
}

# gone NAME: fails for each task pid that launch NAME printed and that still
# runs a tg_server.
gone() {
  local pid
  for pid in $(awk '/^pid \/job:/ {print $3}' "$TMP/$1.out"); do
    if running "$pid" && grep -q tg_server "/proc/$pid/cmdline" 2>/dev/null; then
      fail "$1: tg_server pid $pid still runs after tg_launch exited"
    fi
  done
}

# launch NAME ARGS...: runs tg_launch (at most 120 s) with stdout in
# $TMP/NAME.out and stderr in $TMP/NAME.err; sets $RC. Its tg_server is
# $SERVER if set, else $TG_SERVER.
launch() {
  local name="$1"
  shift
  timeout -k 5 120 "$TG_LAUNCH" --server_binary="${SERVER:-$TG_SERVER}" "$@" \
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

# (3b) --server_config reaches every tg_server as its --config: a good one
# serves, a typo fails the task that parses it, named.
launch configured --workers=1 --server_config='intra_op_parallelism_threads: 1' -- true
[[ $RC -eq 0 ]] || fail "--server_config: exit status $RC, stderr: $(cat "$TMP/configured.err")"
launch misconfigured --workers=1 --server_config='intra_op_parallelism_threadz: 1' -- true
[[ $RC -eq 1 ]] || fail "--server_config typo: exit status $RC"
grep -q "\[worker:0\] .*--config is not a ConfigProto in text format: .*threadz" \
  "$TMP/misconfigured.err" || fail "--server_config typo: stderr [$(cat "$TMP/misconfigured.err")]"

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

# (6) The cluster from a TF_CONFIG-style file, every job TensorFlow knows;
# its "task" is ignored (with a note) and every task starts.
read -r P1 P2 P3 P4 < <(free_ports 4)
cat >"$TMP/cluster.json" <<EOF
{"cluster": {"chief": ["localhost:$P1"], "worker": ["localhost:$P2"],
             "ps": ["localhost:$P3"], "evaluator": ["localhost:$P4"]},
 "task": {"type": "worker", "index": 0}, "rpc_layer": "grpc"}
EOF
launch json --tf_config_file="$TMP/cluster.json" -- sh -c 'echo "tg_cluster $TG_CLUSTER"'
[[ $RC -eq 0 ]] || fail "json: exit status $RC, stderr: $(cat "$TMP/json.err")"
want="chief=localhost:$P1;evaluator=localhost:$P4;ps=localhost:$P3;worker=localhost:$P2"
grep -qx "cluster: $want" "$TMP/json.out" || fail "json: no cluster line in [$(cat "$TMP/json.out")]"
grep -qx "tg_cluster $want" "$TMP/json.out" || fail "json: TG_CLUSTER in [$(cat "$TMP/json.out")]"
for job in chief evaluator ps worker; do
  grep -q "^target /job:$job/replica:0/task:0 grpc://127.0.0.1:[0-9]*$" "$TMP/json.out" ||
    fail "json: no target line for $job in [$(cat "$TMP/json.out")]"
done
grep -q '^tg_launch: ignoring the "task" of .*cluster.json' "$TMP/json.err" ||
  fail "json: no note about the task in [$(cat "$TMP/json.err")]"
gone json

# (7) Bad TF_CONFIG files: exit status 1, the file and the reason named,
# nothing started. A missing file: NOT_FOUND. Both --cluster and
# --tf_config_file: a usage error (2).
bad_file() {  # NAME CONTENT REGEX_AFTER_ERROR
  printf '%s' "$2" >"$TMP/$1.json"
  launch "$1" --tf_config_file="$TMP/$1.json"
  [[ $RC -eq 1 ]] || fail "$1: exit status $RC, stderr: $(cat "$TMP/$1.err")"
  grep -q "^error: $3" "$TMP/$1.err" || fail "$1: stderr [$(cat "$TMP/$1.err")]"
  ! grep -q '^\[' "$TMP/$1.err" || fail "$1: a task was started: [$(cat "$TMP/$1.err")]"
}
bad_file malformed '{"cluster": {"worker": ["localhost:1"' \
  "INVALID_ARGUMENT: --tf_config_file=.*malformed.json: TF_CONFIG is not valid JSON: "
bad_file not_object '["localhost:1"]' "INVALID_ARGUMENT: .*: TF_CONFIG is not a JSON object"
bad_file no_cluster '{"task": {"type": "worker"}}' 'INVALID_ARGUMENT: .*: TF_CONFIG has no "cluster"'
bad_file not_list '{"cluster": {"worker": "localhost:1"}}' \
  'INVALID_ARGUMENT: .*: "cluster"\."worker" must be an array'
bad_file port_zero '{"cluster": {"worker": ["localhost:0"]}}' \
  "INVALID_ARGUMENT: .*: /job:worker/replica:0/task:0 has port 0"
bad_file rpc_layer '{"cluster": {"worker": ["localhost:1"]}, "rpc_layer": "grpc+verbs"}' \
  "INVALID_ARGUMENT: .*: \"rpc_layer\" is 'grpc+verbs'"
launch missing --tf_config_file="$TMP/no_such.json"
[[ $RC -eq 1 ]] || fail "missing file: exit status $RC"
grep -q "^error: NOT_FOUND: .*cannot read TF_CONFIG file '.*no_such.json': No such file" \
  "$TMP/missing.err" || fail "missing file: stderr [$(cat "$TMP/missing.err")]"
launch both --cluster="worker=localhost:1" --tf_config_file="$TMP/cluster.json"
[[ $RC -eq 2 ]] || fail "both sources: exit status $RC"
grep -q "give exactly one of" "$TMP/both.err" || fail "both sources: stderr [$(cat "$TMP/both.err")]"

# (8) Ctrl-C (SIGINT) stops every task, and tg_launch exits 0.
launch_bg sigint --ps=1 --workers=1
if wait_line "$TMP/sigint.out" "^pid /job:worker/"; then
  kill -INT "$BG_PID"
  wait_exit "$BG_PID"
  [[ $RC -eq 0 ]] || fail "SIGINT: exit status $RC, stderr: $(cat "$TMP/sigint.err")"
  grep -q "^tg_launch: Interrupt, stopping the cluster" "$TMP/sigint.err" ||
    fail "SIGINT: stderr [$(cat "$TMP/sigint.err")]"
  gone sigint
else
  fail "SIGINT: never ready: [$(cat "$TMP/sigint.out")] [$(cat "$TMP/sigint.err")]"
fi

# (9) A task that dies while the cluster runs is named; the others are
# stopped and tg_launch exits 1.
launch_bg dies --ps=1 --workers=1
if wait_line "$TMP/dies.out" "^pid /job:worker/"; then
  kill -KILL "$(awk '$1 == "pid" && $2 ~ /job:ps/ {print $3}' "$TMP/dies.out")"
  wait_exit "$BG_PID"
  [[ $RC -eq 1 ]] || fail "task dies: exit status $RC, stderr: $(cat "$TMP/dies.err")"
  grep -q "^tg_launch: task /job:ps/replica:0/task:0 was killed by signal 9" "$TMP/dies.err" ||
    fail "task dies: not named in [$(cat "$TMP/dies.err")]"
  gone dies
else
  fail "task dies: never ready: [$(cat "$TMP/dies.out")] [$(cat "$TMP/dies.err")]"
fi

# (10) Readiness is bounded: "servers" that never print their ready line
# fail the launch after --startup_timeout, and are stopped.
cat >"$TMP/fake_server.sh" <<EOF
#!/bin/sh
echo \$\$ >>"$TMP/fake.pids"
exec sleep 120
EOF
chmod +x "$TMP/fake_server.sh"
: >"$TMP/fake.pids"
SERVER="$TMP/fake_server.sh" launch never_ready --workers=2 --startup_timeout=1 -- true
[[ $RC -eq 1 ]] || fail "never ready: exit status $RC, stderr: $(cat "$TMP/never_ready.err")"
grep -qx "tg_launch: not ready after 1 s: /job:worker/replica:0/task:0, /job:worker/replica:0/task:1" \
  "$TMP/never_ready.err" || fail "never ready: stderr [$(cat "$TMP/never_ready.err")]"

# (11) Ctrl-C while the tasks start, with a command: the command never
# runs, and the exit status says a signal ended it (128 + 2).
started=$(wc -l <"$TMP/fake.pids")
SERVER="$TMP/fake_server.sh" launch_bg interrupted --workers=1 --startup_timeout=60 \
  -- touch "$TMP/command_ran"
for ((i = 0; i < 600; i++)); do  # until the stand-in server runs (60 s at most)
  (($(wc -l <"$TMP/fake.pids") > started)) && break
  sleep 0.1
done
kill -INT "$BG_PID"
wait_exit "$BG_PID"
[[ $RC -eq 130 ]] || fail "SIGINT while starting: exit status $RC, stderr: $(cat "$TMP/interrupted.err")"
[[ ! -e "$TMP/command_ran" ]] || fail "SIGINT while starting: the command ran"
for pid in $(cat "$TMP/fake.pids"); do
  ! running "$pid" || fail "stand-in server $pid still runs after tg_launch exited"
done

# (--task_binary) Tasks that are programs of their own: each gets the
# cluster flags plus the words after "--", and its own TF_CONFIG, prints the
# ready line, and exits by itself. All exit 0: tg_launch exits 0. One exits
# 3: tg_launch names it and exits 1.
cat >"$TMP/task.sh" <<'EOF_TASK'
#!/bin/bash
for a in "$@"; do
  case "$a" in
    --job_name=*) job="${a#*=}" ;;
    --task_index=*) index="${a#*=}" ;;
    --exit=*) code="${a#*=}" ;;
    --staggered) staggered=1 ;;
  esac
done
# --staggered: worker 1 is slow to serve, the ps is done at once.
[[ -n "${staggered:-}" && "$job" == worker && "$index" == 1 ]] && sleep 1.5
echo "tg_server ready /job:$job/replica:0/task:$index 127.0.0.1:1"
echo "tf_config $TF_CONFIG"
[[ -n "${staggered:-}" && "$job" == ps ]] && exit 0
sleep 0.5
[[ "$job" == worker && "$index" == 1 ]] && exit "${code:-0}"
exit 0
EOF_TASK
chmod +x "$TMP/task.sh"
timeout -k 5 60 "$TG_LAUNCH" --ps=1 --workers=2 --task_binary="$TMP/task.sh" -- --exit=0 \
  >"$TMP/tasks_ok.out" 2>"$TMP/tasks_ok.err"
RC=$?
[[ $RC -eq 0 ]] || fail "--task_binary, all tasks exit 0: status $RC, stderr: $(cat "$TMP/tasks_ok.err")"
grep -q "task /job:worker/replica:0/task:1 finished" "$TMP/tasks_ok.err" ||
  fail "--task_binary: no 'finished' line: $(cat "$TMP/tasks_ok.err")"
for task in ps:0 worker:0 worker:1; do
  want="\"task\":{\"type\":\"${task%:*}\",\"index\":${task#*:}}"
  grep -F "[$task] tf_config {\"cluster\":{" "$TMP/tasks_ok.out" "$TMP/tasks_ok.err" | grep -qF "$want" ||
    fail "--task_binary: $task's TF_CONFIG does not name it: $(cat "$TMP/tasks_ok.out" "$TMP/tasks_ok.err")"
done
# A task that is done before another serves is not a failure.
timeout -k 5 60 "$TG_LAUNCH" --ps=1 --workers=2 --task_binary="$TMP/task.sh" -- --staggered \
  >"$TMP/tasks_staggered.out" 2>"$TMP/tasks_staggered.err"
RC=$?
[[ $RC -eq 0 ]] || fail "--task_binary, the ps done early: status $RC, stderr: $(cat "$TMP/tasks_staggered.err")"
[[ $(grep -c " finished$" "$TMP/tasks_staggered.err") -eq 3 ]] ||
  fail "--task_binary, the ps done early: not 3 'finished' lines: $(cat "$TMP/tasks_staggered.err")"
timeout -k 5 60 "$TG_LAUNCH" --ps=1 --workers=2 --task_binary="$TMP/task.sh" -- --exit=3 \
  >"$TMP/tasks_bad.out" 2>"$TMP/tasks_bad.err"
RC=$?
[[ $RC -eq 1 ]] || fail "--task_binary, a task exits 3: status $RC"
grep -q "task /job:worker/replica:0/task:1 exited with status 3" "$TMP/tasks_bad.err" ||
  fail "--task_binary: the failing task is not named: $(cat "$TMP/tasks_bad.err")"

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
