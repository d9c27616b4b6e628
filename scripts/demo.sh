#!/usr/bin/env bash
# The main demo: builds tensorgrid, starts a 1-ps/2-worker cluster of
# tg_server processes on free loopback ports, runs the classic ps/worker
# example on it with tg_run (grpc:// session on worker 0), shows where its
# nodes were placed and why (tg_inspect), and tears the cluster down.
#
#   /job:ps/task:0          /job:worker/task:0        /job:worker/task:1
#   x, y = ones(2,2) ═x,y═► z1b = x·y + x ═══z1b═══► z2b = z1b·x + x  = [[7,7],[7,7]]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //examples:hello_matmul //tools:tg_run //tools:tg_inspect //tools:tg_server

GRAPH=tests/testdata/seed_placement.pbtxt
LOGS=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$LOGS"
}
trap cleanup EXIT

read -r PS W0 W1 < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))')
CLUSTER="ps=localhost:$PS;worker=localhost:$W0,localhost:$W1"

echo "== starting a local cluster: $CLUSTER"
for task in ps:0 worker:0 worker:1; do
  bazel-bin/tools/tg_server --cluster="$CLUSTER" --job_name="${task%:*}" --task_index="${task#*:}" \
    >"$LOGS/$task.out" 2>"$LOGS/$task.err" &
  PIDS+=("$!")
done
for task in ps:0 worker:0 worker:1; do
  for i in $(seq 300); do
    grep -q "tg_server ready" "$LOGS/$task.out" 2>/dev/null && break
    if [ "$i" -eq 300 ]; then echo "task $task did not start:"; cat "$LOGS/$task.err"; exit 1; fi
    sleep 0.1
  done
  cat "$LOGS/$task.out"
done

echo "== the ps/worker example on grpc://localhost:$W0 (x, y on the ps; matmuls on two workers)"
bazel-bin/tools/tg_run --target="grpc://localhost:$W0" --graph="$GRAPH" \
  --run=x/Assign,y/Assign --fetch=z2b

echo "== where its nodes went, and why"
bazel-bin/tools/tg_inspect --graph="$GRAPH" --cluster="$CLUSTER"

echo "== a TensorFlow 1.x GraphDef, in-process (tests/testdata/tf_graphs/variable_mul_add.pbtxt)"
bazel-bin/tools/tg_run --graph=tests/testdata/tf_graphs/variable_mul_add.pbtxt \
  --run=init --fetch=output_node,output_node2
echo "== examples/hello_matmul.cc"
bazel-bin/examples/hello_matmul
