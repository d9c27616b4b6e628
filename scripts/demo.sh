#!/usr/bin/env bash
# The main demo: builds tensorgrid, starts a 1-ps/2-worker cluster on free
# loopback ports with tg_launch, runs the classic ps/worker example on it
# (examples/seed_matmul.cc through a grpc:// session on worker 0), shows where
# its nodes were placed and why (tg_inspect), and tears the cluster down.
#
#   /job:ps/task:0          /job:worker/task:0        /job:worker/task:1
#   x, y = ones(2,2) ═x,y═► z = x·y + x  ════z════►  z = z·x + x   = [[7, 7], [7, 7]]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //examples:seed_matmul //tools:tg_launch //tools:tg_server //tools:tg_run //tools:tg_inspect

# tg_launch runs the quoted script with TG_CLUSTER set ("ps=localhost:P;worker=localhost:W0,...")
# and stops every server afterwards, returning the script's exit status.
bazel-bin/tools/tg_launch --ps=1 --workers=2 -- bash -c '
  set -e
  w0=${TG_CLUSTER#*worker=}; w0=${w0%%[,;]*}
  echo "== the ps/worker example (examples/seed_matmul.cc) on grpc://$w0"
  bazel-bin/examples/seed_matmul --target="grpc://$w0"
  echo "== the same graph from a GraphDef file, with tg_run"
  bazel-bin/tools/tg_run --target="grpc://$w0" --graph=tests/testdata/seed_placement.pbtxt \
    --run=x/Assign,y/Assign --fetch=z2b
  echo "== where its nodes went, and why"
  bazel-bin/tools/tg_inspect --graph=tests/testdata/seed_placement.pbtxt --cluster="$TG_CLUSTER"
'
