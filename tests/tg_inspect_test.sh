#!/bin/bash
# End-to-end test of tools/tg_inspect on the seed placement example
# (tests/testdata/seed_placement.pbtxt: x, y on the ps, matmuls on two worker
# tasks): the placement table, the partition summary, --json, --explain,
# --dot (and the SVG when a `dot` is on PATH), --trace, and the errors.
#
# Usage: tg_inspect_test.sh [PATH_TO_TG_INSPECT]  (Bazel passes the rootpath;
# the default is the runfiles location.)
set -u

RUNFILES="${TEST_SRCDIR:-$PWD}/tensorgrid"
TG_INSPECT="${1:-$RUNFILES/tools/tg_inspect}"
[[ -x "$TG_INSPECT" ]] || TG_INSPECT="$RUNFILES/tools/tg_inspect"
GRAPH="$RUNFILES/tests/testdata/seed_placement.pbtxt"
[[ -f "$GRAPH" ]] || GRAPH="tests/testdata/seed_placement.pbtxt"
CLUSTER="ps=localhost:2222;worker=localhost:2223,localhost:2224"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
PYTHON="$(command -v python3 || echo /usr/bin/python3)"

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# shellcheck source=tests/tool_lib.sh
source "$(dirname "$0")/tool_lib.sh" || exit 1
# run ARGS...: run_tool of tg_inspect (OUT, ERR, RC; PATH from $RUN_PATH when set).
run() { run_tool "$TG_INSPECT" "$@"; }

expect_line() {  # NAME LINE: stdout holds LINE exactly
  grep -qxF -- "$2" "$TMP/out" || fail "$1: no line [$2] in stdout:
$OUT"
}

expect_out() {  # NAME SUBSTRING...
  local name="$1" s
  shift
  for s in "$@"; do
    [[ "$OUT" == *"$s"* ]] || fail "$name: stdout lacks [$s]:
$OUT"
  done
}

count() {  # FILE STRING: lines of FILE containing STRING
  grep -cF -- "$2" "$1"
}

# --- The tables -------------------------------------------------------------
run --graph="$GRAPH" --cluster="$CLUSTER"
expect_ok "tables"
expect_line "tables: title" "Placement of 10 nodes on 3 devices:"
expect_line "tables: header" \
  "NODE             OP          REQUESTED           ASSIGNED                                   REASON"
expect_line "tables: variable" \
  "x                VariableV2  /job:ps/task:0      /job:ps/replica:0/task:0/device:CPU:0      explicit request '/job:ps/task:0'"
expect_line "tables: initial value follows its consumer" \
  "x/initial_value  Const       -                   /job:ps/replica:0/task:0/device:CPU:0      follows its only consumer 'x/Assign'"
expect_line "tables: z1b on worker 0" \
  "z1b              AddV2       /job:worker/task:0  /job:worker/replica:0/task:0/device:CPU:0  explicit request '/job:worker/task:0'"
expect_line "tables: z2 on worker 1" \
  "z2               MatMul      /job:worker/task:1  /job:worker/replica:0/task:1/device:CPU:0  explicit request '/job:worker/task:1'"
expect_line "summary: title" "Partitions: 3 of 3 devices in 3 tasks used; 4 transfers, 64 bytes per step:"
expect_line "summary: header" \
  "TASK                          ADDRESS         DEVICE  NODES  SENDS  RECVS  BYTES_OUT  BYTES_IN"
expect_line "summary: ps" \
  "/job:ps/replica:0/task:0      localhost:2222  CPU:0       6      3      0         48         0"
expect_line "summary: worker 0" \
  "/job:worker/replica:0/task:0  localhost:2223  CPU:0       2      1      2         16        32"
expect_line "summary: worker 1" \
  "/job:worker/replica:0/task:1  localhost:2224  CPU:0       2      0      2          0        32"
expect_line "transfers: z1b" \
  "z1b:0   /job:worker/replica:0/task:0/device:CPU:0  /job:worker/replica:0/task:1/device:CPU:0  float  [2,2]     16"

run --graph "$GRAPH" --cluster "$CLUSTER" --devices_per_task=CPU:2
expect_ok "two CPUs per task"
expect_line "two CPUs per task: idle CPU:1" \
  "/job:ps/replica:0/task:0      localhost:2222  CPU:1       0      0      0          0         0"
expect_line "two CPUs per task: task total" \
  "/job:ps/replica:0/task:0      localhost:2222  total       6      3      0         48         0"

run --graph="$GRAPH"
expect_error "ps job missing from the default device set" 1 \
  "cannot place node" "requested: '/job:ps/task:0'" "devices: /job:localhost/replica:0/task:0 (CPU:0)"

# --- --json -----------------------------------------------------------------
run --graph="$GRAPH" --cluster="$CLUSTER" --json
expect_ok "json"
"$PYTHON" -c 'import json,sys; json.load(sys.stdin)' <"$TMP/out" || fail "json: not valid JSON: $OUT"
checked="$("$PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
p = {r["node"]: r for r in d["placement"]}
assert set(p["x"]) == {"node", "op", "requested", "assigned", "reason"}, p["x"]
assert p["z2b"]["assigned"] == "/job:worker/replica:0/task:1/device:CPU:0"
assert p["x/initial_value"]["requested"] == ""
parts = d["partitions"]
assert [q["task"] for q in parts] == ["/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0",
                                      "/job:worker/replica:0/task:1"], parts
assert [(q["nodes"], q["sends"], q["recvs"], q["bytes"]) for q in parts] == \
    [(6, 3, 0, 48), (2, 1, 2, 48), (2, 0, 2, 32)], parts
assert len(d["transfers"]) == 4
print("ok")
' <"$TMP/out" 2>&1)"
[[ "$checked" == "ok" ]] || fail "json: content: $checked"

# --- --explain --------------------------------------------------------------
run --graph="$GRAPH" --cluster="$CLUSTER" --explain=x/Assign
expect_ok "explain"
expect_out "explain" "'x/Assign' (Assign) -> /job:ps/replica:0/task:0/device:CPU:0" \
  "colocated with 'x' (reference edge)" "chain to the request: 'x/Assign' -(reference edge)- 'x'"

run --graph="$GRAPH" --cluster="$CLUSTER" --explain=nope
expect_error "explain an unknown node" 1 "NOT_FOUND" "no node named 'nope'"

# --- --dot ------------------------------------------------------------------
mkdir -p "$TMP/nodot" "$TMP/fakebin"
DOT="$TMP/seed.dot"
rm -f "$DOT" "$DOT.svg"
RUN_PATH="$TMP/nodot" run --graph="$GRAPH" --cluster="$CLUSTER" --dot="$DOT"
expect_ok "dot without Graphviz"
[[ -z "$ERR" ]] || fail "dot without Graphviz: stderr [$ERR]"
[[ -f "$DOT" ]] || fail "dot: $DOT not written"
[[ ! -e "$DOT.svg" ]] || fail "dot without Graphviz: $DOT.svg exists"
head -1 "$DOT" | grep -qxF "digraph tensorgrid {" || fail "dot: first line [$(head -1 "$DOT")]"
[[ "$(count "$DOT" "subgraph cluster_")" == 3 ]] || fail "dot: expected 3 clusters"
[[ "$(count "$DOT" "subgraph cluster_job_worker_replica_0_task_1_device_CPU_0 {")" == 1 ]] ||
  fail "dot: no cluster for worker 1"
[[ "$(count "$DOT" "style=dashed")" == 4 ]] || fail "dot: expected 4 dashed Send->Recv edges"
grep -qF '"_send_z1b_0_to_CPU_0" -> "_recv_z1b_0_on_CPU_0" [style=dashed' "$DOT" ||
  fail "dot: no dashed z1b transfer"
[[ "$(tr -cd '{' <"$DOT" | wc -c)" == "$(tr -cd '}' <"$DOT" | wc -c)" ]] || fail "dot: unbalanced braces"

# A stand-in Graphviz proves the SVG step runs `dot -Tsvg FILE -o FILE.svg`.
cat >"$TMP/fakebin/dot" <<'EOF'
#!/bin/sh
[ "$1" = "-Tsvg" ] && [ "$3" = "-o" ] && echo "<svg from $2/>" >"$4"
EOF
chmod +x "$TMP/fakebin/dot"
RUN_PATH="$TMP/fakebin:$PATH" run --graph="$GRAPH" --cluster="$CLUSTER" --dot="$DOT"
expect_ok "dot with Graphviz"
[[ "$(cat "$DOT.svg" 2>/dev/null)" == "<svg from $DOT/>" ]] || fail "dot: no $DOT.svg from Graphviz"

# --- --trace ----------------------------------------------------------------
cat >"$TMP/md.pbtxt" <<'EOF'
step_stats {
  dev_stats {
    device: "/job:ps/replica:0/task:0/device:CPU:0"
    node_stats {
      node_name: "_send_x_0_to_CPU_0" all_start_nanos: 1000000 all_end_rel_nanos: 2000 thread_id: 1
      timeline_label: "_send_x_0_to_CPU_0 = _Send 16 bytes to /job:worker/replica:0/task:0/device:CPU:0"
    }
  }
  dev_stats {
    device: "/job:worker/replica:0/task:0/device:CPU:0"
    node_stats {
      node_name: "_recv_x_0_on_CPU_0" all_start_nanos: 999000 all_end_rel_nanos: 5000 thread_id: 2
      timeline_label: "_recv_x_0_on_CPU_0 = _Recv 16 bytes from /job:ps/replica:0/task:0/device:CPU:0"
    }
    node_stats {
      node_name: "z1" all_start_nanos: 1004000 all_end_rel_nanos: 3000 thread_id: 2
      timeline_label: "z1 = MatMul"
    }
  }
}
EOF
run --trace="$TMP/md.pbtxt"
expect_ok "trace"
checked="$("$PYTHON" -c '
import json, sys
events = json.load(sys.stdin)["traceEvents"]
names = [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"]
assert names == ["/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"], names
x = {e["name"]: e for e in events if e["ph"] == "X"}
assert x["z1"]["cat"] == "MatMul" and x["z1"]["dur"] == 3, x["z1"]
s = [e for e in events if e["ph"] == "s"]
f = [e for e in events if e["ph"] == "f"]
assert len(s) == 1 and len(f) == 1 and s[0]["id"] == f[0]["id"], (s, f)
assert s[0]["pid"] == x["_send_x_0_to_CPU_0"]["pid"] and f[0]["pid"] == x["_recv_x_0_on_CPU_0"]["pid"]
print("ok")
' <"$TMP/out" 2>&1)"
[[ "$checked" == "ok" ]] || fail "trace: $checked
$OUT"

run --trace="$TMP/md.pbtxt" --out="$TMP/trace.json"
expect_ok "trace to a file"
[[ -z "$OUT" ]] || fail "trace to a file: stdout [$OUT]"
"$PYTHON" -c 'import json,sys; json.load(sys.stdin)' <"$TMP/trace.json" || fail "trace file: not JSON"

# --- Errors -----------------------------------------------------------------
{ cat "$GRAPH"; echo 'node { name: "bad" op: "NoOp" device: "/job:nope" }'; } >"$TMP/bad.pbtxt"
run --graph="$TMP/bad.pbtxt" --cluster="$CLUSTER"
expect_error "impossible placement" 1 "error: INVALID_ARGUMENT: cannot place node 'bad' (NoOp)" \
  "requested: '/job:nope'" "devices: /job:ps/replica:0/task:0 (CPU:0)"
[[ -z "$OUT" ]] || fail "impossible placement: stdout [$OUT]"

run --graph="$TMP/no_such.pbtxt"
expect_error "missing graph" 1 "NOT_FOUND: cannot read graph file"

run --trace="$TMP/no_such.pb"
expect_error "missing RunMetadata" 1 "NOT_FOUND: cannot read RunMetadata file"

run --graph="$GRAPH" --cluster="ps"
expect_error "bad cluster" 2 "expected JOB=host:port"

run --graph="$GRAPH" --frobnicate
expect_error "unknown flag" 2 "unknown flag '--frobnicate'" "usage: tg_inspect"

run --help
expect_ok "help"
expect_out "help" "usage: tg_inspect" "--cluster=SPEC"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all tg_inspect checks passed"
