# shellcheck shell=bash
# Helpers for shell tests that run a cluster of real tg_server processes on
# loopback. Source it after setting TG_SERVER (the binary) and TMP (a scratch
# directory); it installs an EXIT trap that SIGKILLs every server it started.
#
#   read -r PS W0 W1 < <(free_ports 3)
#   start_server ps --cluster="$CLUSTER" --job_name=ps --task_index=0
#   wait_ready ps "$LAST_PID" || exit 1
#   stop_servers   # SIGTERM, bounded wait; fails for a non-zero exit status
#
# Failures go through fail(), which counts them in $failures.

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

PIDS=()
kill_servers() {
  local pid
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
}
trap kill_servers EXIT

# Ports below the kernel's ephemeral range (tests/free_ports.py says why).
FREE_PORTS_PY="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/free_ports.py"
# free_ports N: N distinct ports nobody listens on right now.
free_ports() { python3 "$FREE_PORTS_PY" "$1"; }
# free_port_range N: a port B such that B..B+N-1 are all free right now
# (for launchers that number ports from a base, as Slurm's --port_base).
free_port_range() { python3 "$FREE_PORTS_PY" --range "$1"; }

# start_server NAME ARGS...: starts tg_server in the background, stdout in
# $TMP/NAME.out, stderr in $TMP/NAME.err; sets $LAST_PID.
start_server() {
  local name="$1"
  shift
  "$TG_SERVER" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  LAST_PID=$!
  PIDS+=("$LAST_PID")
}

# wait_ready NAME PID: waits up to 30 s for the ready line; 1 if the
# process exits first or the time runs out.
wait_ready() {
  local i
  for ((i = 0; i < 300; i++)); do
    grep -q "^tg_server ready " "$TMP/$1.out" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  fail "$1 not ready: stdout [$(cat "$TMP/$1.out")] stderr [$(cat "$TMP/$1.err")]"
  return 1
}

# until_true SECONDS CMD...: runs CMD every 0.2 s until it succeeds; 1 if it
# never did within SECONDS.
until_true() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# wait_exit PID [SECONDS]: waits up to SECONDS (default 30) for PID to exit;
# sets $RC (124: still running).
wait_exit() {
  local i
  for ((i = 0; i < ${2:-30} * 10; i++)); do
    if ! kill -0 "$1" 2>/dev/null; then
      wait "$1"
      RC=$?
      return
    fi
    sleep 0.1
  done
  RC=124
}

# stop_servers: SIGTERM to every server started, then a bounded wait for each;
# a server that does not exit 0 is a failure (the EXIT trap kills leftovers).
stop_servers() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${PIDS[@]}"; do
    wait_exit "$pid"
    [[ $RC -eq 0 ]] || fail "server $pid after SIGTERM: exit status $RC"
  done
}
