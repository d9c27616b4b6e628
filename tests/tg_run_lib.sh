# shellcheck shell=bash
# Running tools/tg_run in shell tests and checking what it printed. Source it
# after setting TG_RUN (the binary) and TMP (a scratch directory), with a
# fail() that counts failures (tests/cluster_lib.sh has one).
#
#   run_tg --graph="$GRAPH" --fetch=y
#   expect_ok "fetch y" "y float [] 2"
#   run_tg --graph=/nowhere --fetch=y
#   expect_error "no graph" 1 "NOT_FOUND" "/nowhere"

# run_tg ARGS...: runs tg_run, leaving stdout in $OUT, stderr in $ERR and the
# exit status in $RC.
run_tg() {
  "$TG_RUN" "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
  OUT="$(cat "$TMP/out")"
  ERR="$(cat "$TMP/err")"
}

expect_ok() {  # NAME EXPECTED_STDOUT
  [[ $RC -eq 0 ]] || fail "$1: exit status $RC, stderr: $ERR"
  [[ "$OUT" == "$2" ]] || fail "$1: stdout was [$OUT], expected [$2]"
}

expect_error() {  # NAME EXIT_STATUS SUBSTRING...
  local name="$1" status="$2" s
  shift 2
  [[ $RC -eq $status ]] || fail "$name: exit status $RC, expected $status; stderr: $ERR"
  for s in "$@"; do
    [[ "$ERR" == *"$s"* ]] || fail "$name: stderr [$ERR] lacks [$s]"
  done
}
