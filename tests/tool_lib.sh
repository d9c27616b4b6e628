# shellcheck shell=bash
# Running a command-line tool (tools/tg_run, tools/tg_inspect) in shell tests
# and checking what it printed. Source it after setting TMP (a scratch
# directory), with a fail() that counts failures (tests/cluster_lib.sh has
# one); run_tg needs TG_RUN (the binary).
#
#   run_tg --graph="$GRAPH" --fetch=y
#   expect_ok "fetch y" "y float [] 2"
#   run_tg --graph=/nowhere --fetch=y
#   expect_error "no graph" 1 "NOT_FOUND" "/nowhere"

# run_tool TOOL ARGS...: runs TOOL (with $RUN_PATH as PATH when set), leaving
# stdout in $OUT, stderr in $ERR and the exit status in $RC.
run_tool() {
  PATH="${RUN_PATH:-$PATH}" "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
  OUT="$(cat "$TMP/out")"
  ERR="$(cat "$TMP/err")"
}

# run_tg ARGS...: run_tool of tg_run.
run_tg() { run_tool "$TG_RUN" "$@"; }

expect_ok() {  # NAME [EXPECTED_STDOUT]
  [[ $RC -eq 0 ]] || fail "$1: exit status $RC, stderr: $ERR"
  [[ $# -lt 2 || "$OUT" == "$2" ]] || fail "$1: stdout was [$OUT], expected [$2]"
}

expect_error() {  # NAME EXIT_STATUS SUBSTRING...
  local name="$1" status="$2" s
  shift 2
  [[ $RC -eq $status ]] || fail "$name: exit status $RC, expected $status; stderr: $ERR"
  for s in "$@"; do
    [[ "$ERR" == *"$s"* ]] || fail "$name: stderr [$ERR] lacks [$s]"
  done
}
