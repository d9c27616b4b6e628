#!/usr/bin/env bash
# The main demo: builds tensorgrid, runs the hello_matmul example, runs a
# graph written by TensorFlow through tg_run, and shows where the classic
# ps/worker example's nodes would be placed on a 1-ps/2-worker cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //examples:hello_matmul //tools:tg_run //tools:tg_inspect
echo "== examples/hello_matmul.cc"
bazel-bin/examples/hello_matmul
echo "== tg_run on a TensorFlow 1.x GraphDef (tests/testdata/tf_graphs/variable_mul_add.pbtxt)"
bazel-bin/tools/tg_run --graph=tests/testdata/tf_graphs/variable_mul_add.pbtxt \
  --run=init --fetch=output_node,output_node2
bazel-bin/tools/tg_run --graph=tests/testdata/tf_graphs/variable_mul_add.pbtxt \
  --feed='placeholder_1=[1,2]' --feed='placeholder_2=[10,20]' --fetch=Add2
echo "== tg_inspect: placement of the ps/worker seed example (tests/testdata/seed_placement.pbtxt)"
bazel-bin/tools/tg_inspect --graph=tests/testdata/seed_placement.pbtxt \
  --cluster="ps=localhost:2222;worker=localhost:2223,localhost:2224"
