#!/bin/bash
# End-to-end test of tools/tg_run on a real TensorFlow graph
# (tests/testdata/tf_graphs/variable_mul_add.pbtxt): checks exact output lines,
# error codes on stderr and exit statuses.
#
# Usage: tg_run_test.sh [PATH_TO_TG_RUN]  (Bazel passes the rootpath; the
# default is the runfiles location.)
set -u

RUNFILES="${TEST_SRCDIR:-$PWD}/tensorgrid"
TG_RUN="${1:-$RUNFILES/tools/tg_run}"
[[ -x "$TG_RUN" ]] || TG_RUN="$RUNFILES/tools/tg_run"
GRAPH="$RUNFILES/tests/testdata/tf_graphs/variable_mul_add.pbtxt"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# shellcheck source=tests/tool_lib.sh
source "$(dirname "$0")/tool_lib.sh" || exit 1

run_tg --graph="$GRAPH" --run=init --fetch=output_node,output_node2
expect_ok "init then fetch" "output_node float [] 2
output_node2 float [] 4"

run_tg --graph="$GRAPH" --feed='placeholder_1=[1,2]' --feed='placeholder_2=[10,20]' --fetch=Add2
expect_ok "feed placeholders" "Add2 float [2] [11,22]"

run_tg --graph="$GRAPH" --feed='placeholder_1=[1,2]' --feed='placeholder_2=[10,20]' --fetch=Add2 \
  --run_metadata="$TMP/run_metadata.pb"
expect_ok "traced step" "Add2 float [2] [11,22]"
[[ -s "$TMP/run_metadata.pb" ]] || fail "--run_metadata wrote no file"
grep -q "device:CPU:0" "$TMP/run_metadata.pb" || fail "--run_metadata has no step stats for CPU:0"

run_tg --graph "$GRAPH" --feed 'placeholder_1:0:float=[1.5,2]' --feed 'placeholder_2:0=[0.1,20]' \
  --fetch Add2:0
expect_ok "ports, dtypes and space-separated flags" "Add2:0 float [2] [1.6,22]"

run_tg --graph="$GRAPH" --run=init
expect_ok "run only" ""

run_tg --graph="$GRAPH" --feed='placeholder_1=[1,2,3]' --feed='placeholder_2=[10,20]' --fetch=Add2
expect_error "wrong feed shape" 1 "error: INVALID_ARGUMENT:" "placeholder_1"
[[ -z "$OUT" ]] || fail "wrong feed shape: unexpected stdout [$OUT]"

run_tg --graph="$GRAPH" --fetch=output_node
expect_error "fetch before init" 1 "error: FAILED_PRECONDITION:" "variable_node"

run_tg --graph="$GRAPH" --run=save/restore_all
expect_error "op without kernel" 1 "error: UNIMPLEMENTED:" "save/restore_all" "RestoreSlice"

run_tg --graph="$GRAPH" --fetch=no_such_node
expect_error "unknown fetch" 1 "error: NOT_FOUND:" "no_such_node"

run_tg --graph="$GRAPH" --target=nonsense://x --fetch=Add2
expect_error "unknown target" 1 "error: INVALID_ARGUMENT:" "nonsense://x"

run_tg --graph="$TMP/does_not_exist.pbtxt" --fetch=y
expect_error "missing file" 1 "error: NOT_FOUND:" "does_not_exist.pbtxt"

echo "this is not a graph" >"$TMP/garbage.pb"
run_tg --graph="$TMP/garbage.pb" --fetch=y
expect_error "garbage binary file" 1 "error: INVALID_ARGUMENT:" "garbage.pb"

echo "node { name: 'x' op: " >"$TMP/garbage.pbtxt"
run_tg --graph="$TMP/garbage.pbtxt" --fetch=y
expect_error "garbage text file" 1 "error: INVALID_ARGUMENT:" "garbage.pbtxt" "line 2"

run_tg --graph="$GRAPH" --feed='placeholder_1=[1,x]' --fetch=Add2
expect_error "bad feed value" 2 "placeholder_1" "column 4"

run_tg --graph="$GRAPH" --fetch=Add2 --bogus=1
expect_error "unknown flag" 2 "unknown flag '--bogus'" "usage: tg_run"

run_tg --fetch=Add2
expect_error "no graph" 2 "--graph or --saved_model is required"

run_tg --help
[[ $RC -eq 0 && "$OUT" == usage:* ]] || fail "--help: status $RC, stdout [$OUT]"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "PASS"
