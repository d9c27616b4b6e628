#!/bin/bash
# examples/seed_matmul against a real three-process cluster on loopback:
# tg_server for /job:ps/task:0, /job:worker/task:0 and /job:worker/task:1 on
# free ports; the example's session is on worker 0 and must print exactly
# "[[7, 7], [7, 7]]". Every wait is bounded; an EXIT trap kills the servers.
#
# Usage: seed_matmul_test.sh TG_SERVER SEED_MATMUL CLUSTER_LIB
#   (Bazel passes the rootpaths.)
set -u

TG_SERVER="$1"
SEED_MATMUL="$2"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
# shellcheck source=tests/cluster_lib.sh
source "$3"

read -r PS W0 W1 < <(free_ports 3)
CLUSTER="ps=127.0.0.1:$PS;worker=127.0.0.1:$W0,127.0.0.1:$W1"
start_server ps --cluster="$CLUSTER" --job_name=ps --task_index=0
wait_ready ps "$LAST_PID" || exit 1
start_server worker0 --cluster="$CLUSTER" --job_name=worker --task_index=0
wait_ready worker0 "$LAST_PID" || exit 1
start_server worker1 --cluster="$CLUSTER" --job_name=worker --task_index=1
wait_ready worker1 "$LAST_PID" || exit 1

OUT="$(timeout 60 "$SEED_MATMUL" --target="grpc://127.0.0.1:$W0" 2>"$TMP/seed.err")"
RC=$?
[[ $RC -eq 0 ]] || fail "seed_matmul: exit status $RC, stderr: $(cat "$TMP/seed.err")"
[[ "$OUT" == "[[7, 7], [7, 7]]" ]] || fail "seed_matmul: stdout [$OUT]"

# A bad flag: the usage line and exit status 1, with no session opened.
timeout 30 "$SEED_MATMUL" --bogus >"$TMP/usage.out" 2>"$TMP/usage.err"
RC=$?
[[ $RC -eq 1 ]] || fail "seed_matmul --bogus: exit status $RC"
grep -q "^usage: seed_matmul" "$TMP/usage.err" || fail "usage: [$(cat "$TMP/usage.err")]"

stop_servers

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
