#!/bin/bash
# tg_run --saved_model on the SavedModels TensorFlow wrote
# (tests/testdata/tf_saved_models, README.md there): half_plus_two's
# signatures give a*x + b with the restored a = 0.5, b = 2 (c = 3), in process
# and through a one-task tg_server cluster (grpc://), from tensors and from
# tf.Examples (--input_examples, parsed by the graph's ParseExample); --show lists the
# counter's signatures; errors name the tag set, signature or key.
#
# Usage: saved_model_test.sh TG_RUN TG_SERVER CLUSTER_LIB  (Bazel passes the rootpaths.)
set -u

RUNFILES="${TEST_SRCDIR:-$PWD}/tensorgrid"
TG_RUN="$1"
TG_SERVER="$2"
MODELS="$RUNFILES/tests/testdata/tf_saved_models"
[[ -d "$MODELS" ]] || MODELS="tests/testdata/tf_saved_models"
HALF="$MODELS/saved_model_half_plus_two_cpu/00000123"
COUNTER="$MODELS/saved_model_counter/00000123"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"

# shellcheck source=tests/cluster_lib.sh
source "$3"

# shellcheck source=tests/tool_lib.sh
source "$(dirname "$0")/tool_lib.sh" || exit 1

# 1. In process.
run_tg --saved_model="$HALF" --input='x=[1,2,3]'
expect_ok "half_plus_two serving_default" "y float [3] [2.5,3,3.5]"
run_tg --saved_model="$HALF" --signature=regress_x2_to_y3 --input='inputs=[[1],[2]]'
expect_ok "half_plus_two regress_x2_to_y3 (a*x2 + c)" "outputs float [2,1] [[3.5],[4]]"
run_tg --saved_model="$HALF" --signature=regress_x_to_y \
  --input_examples='inputs=[{"x":[1.0]},{"x":2.0},{"x":[3.0]}]'
expect_ok "half_plus_two regress_x_to_y over tf.Examples" "outputs float [3,1] [[2.5],[3],[3.5]]"
run_tg --saved_model="$HALF" --signature=classify_x_to_y --input_examples='inputs=[{"x":[4.0]}]'
expect_ok "half_plus_two classify_x_to_y over tf.Examples" "scores float [1,1] [[4]]"
run_tg --saved_model="$HALF" --signature=regress_x_to_y2 --input_examples='inputs=[{"x":[1.0]}]'
expect_ok "half_plus_two regress_x_to_y2 (a*x + c)" "outputs float [1,1] [[3.5]]"
run_tg --saved_model="$COUNTER" --show
expect_ok "counter --show" "signature 'get_counter' (tensorflow/serving/predict)
  output output: float_ref [] (counter:0)
signature 'incr_counter' (tensorflow/serving/predict)
  output output: float_ref [] (incr_counter_op/AssignAdd:0)
signature 'incr_counter_by' (tensorflow/serving/predict)
  input  delta: float <unknown> (delta:0)
  output output: float_ref [] (incr_counter_by_op/AssignAdd:0)
signature 'reset_counter' (tensorflow/serving/predict)
  output output: float_ref [] (reset_counter_op/Assign:0)"
run_tg --saved_model="$COUNTER" --signature=incr_counter_by --input='delta=5'
expect_ok "counter incr_counter_by 5 (from the restored 0)" "output float [] 5"

# 2. Errors.
run_tg --saved_model="$HALF" --tag=serve,gpu --input='x=[1]'
expect_error "a tag set the model lacks" 1 "NOT_FOUND" "no MetaGraphDef with the tags {gpu, serve}" \
  "its tag sets: {serve}"
run_tg --saved_model="$HALF" --signature=nope
expect_error "an unknown signature" 1 "NOT_FOUND" "no signature 'nope'" "serving_default"
run_tg --saved_model="$HALF" --input='z=[1]'
expect_error "an unknown input key" 1 "INVALID_ARGUMENT" "has no input 'z'; its inputs: x"
run_tg --saved_model="$HALF" --input='x=["a"]'
expect_error "a value of the wrong dtype (a bad flag value)" 2 "--input 'x'" "expected a float"
run_tg --saved_model="$HALF" --input='x=[1]' --input='x=[2]'
expect_error "an input given twice" 2 "--input 'x' is given more than once"
run_tg --saved_model="$HALF" --signature=regress_x_to_y --input_examples='inputs=[{"x":[1]}]'
expect_error "an int64 feature where the model parses floats" 1 "INVALID_ARGUMENT" \
  "example 0: feature 'x' holds int64 values, but float is expected"
run_tg --saved_model="$TMP/nowhere"
expect_error "no SavedModel" 1 "NOT_FOUND" "SavedModel not found in export directory"

# 3. Through a cluster: one tg_server task; the variables are restored there.
read -r PORT < <(free_ports 1)
start_server worker --cluster="worker=127.0.0.1:$PORT" --job_name=worker --task_index=0
wait_ready worker "$LAST_PID" || exit 1
run_tg --saved_model="$HALF" --target="grpc://127.0.0.1:$PORT" --input='x=[1,2,3]'
expect_ok "half_plus_two through grpc://" "y float [3] [2.5,3,3.5]"
stop_servers

exit $failures
