#!/bin/bash
# examples/seed_matmul against a real three-process cluster on loopback:
# tg_server for /job:ps/task:0, /job:worker/task:0 and /job:worker/task:1 on
# free ports; the example's session is on worker 0 and must print exactly
# "[[7, 7], [7, 7]]"; then with x and y unequal, whose answer (computed here
# in Python) a tensor transposed or reordered between tasks would change.
# Every wait is bounded; an EXIT trap kills the servers.
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

# z = (x·y + x)·x + x with x = [[1, 2], [3, 4]], y = [[5, 6], [7, 8]].
EXPECTED="$(python3 - <<'PY'
x = [[1, 2], [3, 4]]
y = [[5, 6], [7, 8]]
def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(2)) for j in range(2)] for i in range(2)]
def add(a, b):
    return [[a[i][j] + b[i][j] for j in range(2)] for i in range(2)]
z = add(matmul(add(matmul(x, y), x), x), x)
print("[[%d, %d], [%d, %d]]" % (z[0][0], z[0][1], z[1][0], z[1][1]))
PY
)"
OUT="$(timeout 60 "$SEED_MATMUL" --target="grpc://127.0.0.1:$W0" --x=1,2,3,4 --y=5,6,7,8 \
  2>"$TMP/seed.err")"
RC=$?
[[ $RC -eq 0 ]] || fail "seed_matmul --x --y: exit status $RC, stderr: $(cat "$TMP/seed.err")"
[[ "$OUT" == "$EXPECTED" ]] || fail "seed_matmul --x --y: stdout [$OUT], expected [$EXPECTED]"

# Bad flags: exit status 2 and what is wrong, with no session opened.
bad_flag() {
  timeout 30 "$SEED_MATMUL" "$1" >"$TMP/usage.out" 2>"$TMP/usage.err"
  RC=$?
  [[ $RC -eq 2 ]] || fail "seed_matmul $1: exit status $RC"
  grep -qF -- "$2" "$TMP/usage.err" || fail "$1: stderr [$(cat "$TMP/usage.err")] lacks [$2]"
}
bad_flag --bogus "unknown argument '--bogus'"
grep -q "^usage: seed_matmul" "$TMP/usage.err" || fail "--bogus: no usage: [$(cat "$TMP/usage.err")]"
bad_flag --x=1,2,3 "--x needs four numbers separated by commas (row by row), got '1,2,3'"
bad_flag --y=1,2,3,4,5 "--y needs four numbers separated by commas (row by row), got '1,2,3,4,5'"
bad_flag --x=a,b,c,d "--x needs four numbers"

stop_servers

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
