#!/usr/bin/env bash
# The Fashion-MNIST examples on a GPU machine (issue 17 item 12), each short:
#
#   fashion_mnist --device=gpu                 the MLP on /device:GPU:0
#   multi_worker_fashion_mnist, 2 workers      each worker's replica on its GPU
#   distributed_fashion_mnist, 1 ps + 2 workers (examples/run_distributed_fashion_mnist.sh)
#                                              the workers' ops on their GPU
#
# Each prints test_accuracy=; the script prints where the replicas ran and a
# last line "N passed, N failed" (a run passes when it exits 0 with an
# accuracy of at least 0.70 after its few steps).
#
#   bash scripts/gpu_examples.sh OUT_DIR          # binaries built here (--config=opt)
#   bash .scaling_bundle/run.sh OUT_DIR gpu-examples  # there, from the bundle
#                                                 # scripts/gpu_check.sh scaling builds
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d -t tensorgrid-gpu-examples.XXXXXX)}
mkdir -p "$out"
if [[ -z "${BIN_DIR:-}" ]]; then
  bazel build --config=opt //examples:fashion_mnist //examples:multi_worker_fashion_mnist \
    //examples:distributed_fashion_mnist >"$out/build.log" 2>&1 || {
    tail -n 30 "$out/build.log"
    exit 1
  }
  BIN_DIR="$(bazel info --config=opt bazel-bin 2>/dev/null)"
fi
DATA=()
[[ -n "${DATA_DIR:-}" ]] && DATA=(--data_dir="$DATA_DIR")
accuracy() { sed -nE 's/.*test_accuracy=([0-9.]+).*/\1/p' "$1" | head -1; }
passed=0 failed=0
verdict() {  # NAME LOG RC
  local a
  a=$(accuracy "$2")
  if [[ $3 -eq 0 && -n "$a" ]] && awk -v a="$a" 'BEGIN { exit !(a >= 0.70) }'; then
    echo "gpu_examples: $1 passed, test_accuracy=$a"
    passed=$((passed + 1))
  else
    echo "gpu_examples: $1 FAILED (exit $3, test_accuracy='$a'); its last lines:"
    tail -n 15 "$2"
    failed=$((failed + 1))
  fi
}

timeout 600 "$BIN_DIR/examples/fashion_mnist" --device=gpu --steps=1000 "${DATA[@]}" \
  >"$out/fashion_mnist.log" 2>&1
verdict "fashion_mnist --device=gpu" "$out/fashion_mnist.log" $?

ports=$(python3 tests/free_ports.py 2)
hosts=""
for p in $ports; do hosts+="${hosts:+, }\"127.0.0.1:$p\""; done
pids=()
for k in 0 1; do
  TF_CONFIG="{\"cluster\": {\"worker\": [$hosts]}, \"task\": {\"type\": \"worker\", \"index\": $k}}" \
    timeout 600 "$BIN_DIR/examples/multi_worker_fashion_mnist" --epochs=1 "${DATA[@]}" \
    >"$out/multi_worker_$k.log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
grep -h "replicas on" "$out"/multi_worker_*.log
verdict "multi_worker_fashion_mnist (2 workers)" "$out/multi_worker_0.log" $rc

BIN="$BIN_DIR/examples/distributed_fashion_mnist" PS=1 WORKERS=2 TIMEOUT=600 \
  LOG_DIR="$out/distributed" bash examples/run_distributed_fashion_mnist.sh --steps=1000 \
  "${DATA[@]}" >"$out/distributed.log" 2>&1
verdict "distributed_fashion_mnist (1 ps + 2 workers)" "$out/distributed.log" $?

echo "$passed passed, $failed failed"
