#!/usr/bin/env bash
# Runs examples/distributed_fashion_mnist as a whole cluster on this machine:
# PS ps tasks and WORKERS worker tasks (default 2 + 2), each a process of the
# example on a free 127.0.0.1 port, as TensorFlow's classic program is run.
# Every line a task writes comes back prefixed with its name ("[worker:1] ");
# the logs stay in LOG_DIR. The ps tasks end by themselves once every worker
# has enqueued its done token, so a good run ends with every task exiting 0;
# the script then repeats the chief's last line (test_accuracy=0.xxxx) and
# exits 0. Otherwise it stops every task it started and exits with the
# chief's status (1 if the chief was fine but another task was not).
#
#   examples/run_distributed_fashion_mnist.sh --steps=6000      # flags go to every task
#   BIN=bazel-bin/examples/distributed_fashion_mnist TIMEOUT=600 \
#       examples/run_distributed_fashion_mnist.sh --steps=200 --log_every=10
#
# BIN: the example (default: built here with bazel --config=opt). TIMEOUT:
# seconds the whole run may take (default 3600). GRACE: seconds the other
# tasks get to exit by themselves after the chief (default 60). PIN_CPUS:
# one taskset CPU list per task, ps tasks first ("0-5 6-11 12-15"), to pin
# each task to its own cores (default: no pinning).
set -u

PS="${PS:-2}"
WORKERS="${WORKERS:-2}"
TIMEOUT="${TIMEOUT:-3600}"
GRACE="${GRACE:-60}"
LOG_DIR="${LOG_DIR:-$(mktemp -d -t distributed_fashion_mnist.XXXXXX)}"
mkdir -p "$LOG_DIR"
say() { echo "run_distributed_fashion_mnist: $*" >&2; }
FREE_PORTS_PY="$(cd "$(dirname "$0")/.." && pwd)/tests/free_ports.py"

if [[ -z "${BIN:-}" ]]; then
  cd "$(dirname "$0")/.." || exit 1
  bazel build --config=opt //examples:distributed_fashion_mnist >"$LOG_DIR/build.log" 2>&1 || {
    tail -n 40 "$LOG_DIR/build.log" >&2
    exit 1
  }
  BIN="$(bazel info --config=opt bazel-bin 2>/dev/null)/examples/distributed_fashion_mnist"
fi
[[ -x "$BIN" ]] || { say "no example binary at $BIN"; exit 1; }

# Free ports, below the kernel's ephemeral range (tests/free_ports.py).
read -r -a PORTS < <(python3 "$FREE_PORTS_PY" "$((PS + WORKERS))")
hosts() { local IFS=,; echo "$*"; }
PS_HOSTS=$(hosts $(for ((i = 0; i < PS; i++)); do echo "127.0.0.1:${PORTS[i]}"; done))
WORKER_HOSTS=$(hosts $(for ((i = 0; i < WORKERS; i++)); do echo "127.0.0.1:${PORTS[PS + i]}"; done))
say "ps_hosts=$PS_HOSTS worker_hosts=$WORKER_HOSTS logs in $LOG_DIR"

NAMES=()     # "ps:0", ..., "worker:1"
PIDS=()      # the tasks
TAILS=()     # the prefixing readers of their logs
declare -A STATUS=()
stop_all() {
  local pid i
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for ((i = 0; i < 100; i++)); do
    local alive=0
    for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  for pid in "${TAILS[@]}"; do wait "$pid" 2>/dev/null; done
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

read -r -a PINS <<<"${PIN_CPUS:-}"
if ((${#PINS[@]} > 0 && ${#PINS[@]} != PS + WORKERS)); then
  say "PIN_CPUS has ${#PINS[@]} CPU lists for $((PS + WORKERS)) tasks"
  exit 2
fi
start_task() {  # JOB INDEX FLAGS...
  local job="$1" index="$2" name="$1:$2" pin=()
  shift 2
  if ((${#PINS[@]} > 0)); then
    pin=(taskset -c "${PINS[${#PIDS[@]}]}")
  fi
  "${pin[@]}" "$BIN" --ps_hosts="$PS_HOSTS" --worker_hosts="$WORKER_HOSTS" --job_name="$job" \
    --task_index="$index" "$@" >"$LOG_DIR/$job$index.out" 2>"$LOG_DIR/$job$index.err" &
  local pid=$!
  NAMES+=("$name")
  PIDS+=("$pid")
  tail -n +1 -F --pid="$pid" "$LOG_DIR/$job$index.out" 2>/dev/null | sed -u "s/^/[$name] /" &
  TAILS+=($!)
  tail -n +1 -F --pid="$pid" "$LOG_DIR/$job$index.err" 2>/dev/null | sed -u "s/^/[$name] /" >&2 &
  TAILS+=($!)
}
for ((i = 0; i < PS; i++)); do start_task ps "$i" "$@"; done
for ((i = 0; i < WORKERS; i++)); do start_task worker "$i" "$@"; done

# Collects the exit status of every task that has ended. Returns 1 once all have.
reap() {
  local i running=0
  for i in "${!PIDS[@]}"; do
    [[ -n "${STATUS[$i]:-}" ]] && continue
    if kill -0 "${PIDS[i]}" 2>/dev/null; then
      running=1
    else
      wait "${PIDS[i]}"
      STATUS[$i]=$?
      say "${NAMES[i]} exited with status ${STATUS[$i]}"
    fi
  done
  return $((!running))
}
failed_task() {  # prints the first task that exited non-zero
  local i
  for i in "${!STATUS[@]}"; do [[ "${STATUS[$i]}" != 0 ]] && { echo "${NAMES[i]}"; return 0; }; done
  return 1
}

deadline=$((SECONDS + TIMEOUT))
chief_done_at=""
while reap; do
  if failed_task >/dev/null; then
    say "$(failed_task) failed; stopping the cluster"
    break
  fi
  if [[ -n "${STATUS[$PS]:-}" && -z "$chief_done_at" ]]; then chief_done_at=$SECONDS; fi
  if [[ -n "$chief_done_at" ]] && ((SECONDS - chief_done_at > GRACE)); then
    say "the chief is done, but some tasks did not exit within ${GRACE} s; stopping them"
    break
  fi
  if ((SECONDS > deadline)); then
    say "not done after ${TIMEOUT} s; stopping the cluster"
    break
  fi
  sleep 0.5
done
stop_all
trap - EXIT

if [[ -z "${STATUS[$PS]:-}" ]]; then exit 1; fi
if [[ "${STATUS[$PS]}" != 0 ]]; then exit "${STATUS[$PS]}"; fi
reap
for i in "${!PIDS[@]}"; do
  [[ "${STATUS[$i]:-}" == 0 ]] || { say "${NAMES[i]} did not exit 0 by itself"; exit 1; }
done
say "every task exited 0"
tail -n 1 "$LOG_DIR/worker0.out"
