#!/usr/bin/env bash
# Builds the benchmarks optimized, runs each one and prints one table.
#
#   bench/run.sh                 # about a minute on 2 cores once built
#   MIN_TIME=0.5 bench/run.sh    # longer repetitions, slower
#   SKIP_BUILD=1 bench/run.sh    # run the binaries already built
#
# Raw JSON and console output are kept in $OUT_DIR (default: a temp dir).
# All-reduce bus bandwidth against gloo and MPI has its own script,
# bench/run_allreduce.sh (it needs python3-torch; see docs/PERFORMANCE.md).
set -euo pipefail
cd "$(dirname "$0")/.."

MIN_TIME="${MIN_TIME:-0.1}"
OUT_DIR="${OUT_DIR:-$(mktemp -d -t tensorgrid-bench.XXXXXX)}"
mkdir -p "$OUT_DIR"

if [[ -z "${SKIP_BUILD:-}" ]]; then
  bazel build --config=opt //bench:all >"$OUT_DIR/build.log" 2>&1 || {
    tail -40 "$OUT_DIR/build.log"
    exit 1
  }
fi
# bazel-bin follows whichever configuration built last; ask for ours.
BIN="$(bazel info --config=opt bazel-bin 2>/dev/null)/bench"

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
if awk -v l="${LOAD_BEFORE%% *}" 'BEGIN { exit !(l > 1.0) }'; then
  echo "warning: load average is $LOAD_BEFORE; other work will skew the numbers" >&2
fi
# Repetitions of different benchmarks are interleaved at random, so that a
# burst of outside load spreads over all of them instead of sinking one.
for name in session executor matmul distributed_step recv_tensor; do
  echo "running ${name}_benchmark ..." >&2
  "$BIN/${name}_benchmark" --benchmark_min_time="$MIN_TIME" \
    --benchmark_enable_random_interleaving=true \
    --benchmark_out="$OUT_DIR/$name.json" --benchmark_out_format=json \
    >"$OUT_DIR/$name.txt" 2>&1
done

# BM_NullStep_OwnProcess's peer: the same step through the loopback socket.
echo "running distributed_step_benchmark with TG_BULK_IN_PROCESS=0 ..." >&2
TG_BULK_IN_PROCESS=0 "$BIN/distributed_step_benchmark" --benchmark_min_time="$MIN_TIME" \
  --benchmark_filter=OwnProcess \
  --benchmark_out="$OUT_DIR/distributed_step_socket.json" --benchmark_out_format=json \
  >"$OUT_DIR/distributed_step_socket.txt" 2>&1

# The peer of distributed_step: torch.distributed.rpc's rpc_sync, from
# Debian's python3-torch. Without it the report says "not available" and why.
echo "running torch_rpc_peer.py ..." >&2
if [[ -x /usr/bin/python3 ]]; then
  /usr/bin/python3 bench/torch_rpc_peer.py >"$OUT_DIR/torch_rpc.json" 2>"$OUT_DIR/torch_rpc.txt" ||
    echo "{\"available\": false, \"reason\": \"torch_rpc_peer.py failed, see $OUT_DIR/torch_rpc.txt\"}" \
      >"$OUT_DIR/torch_rpc.json"
else
  echo '{"available": false, "reason": "no /usr/bin/python3"}' >"$OUT_DIR/torch_rpc.json"
fi

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GiB;" \
  "load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 bench/report.py --torch_rpc="$OUT_DIR/torch_rpc.json" \
  --own_socket="$OUT_DIR/distributed_step_socket.json" "$OUT_DIR/session.json" \
  "$OUT_DIR/executor.json" "$OUT_DIR/matmul.json" "$OUT_DIR/distributed_step.json" \
  "$OUT_DIR/recv_tensor.json"
echo
echo "raw results: $OUT_DIR"
