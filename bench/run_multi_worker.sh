#!/usr/bin/env bash
# MultiWorkerMirroredStrategy step time against one worker on the same global
# batch: examples/multi_worker_fashion_mnist (784-128-10, Adam) as one worker
# with a batch of 128, then as two worker processes with 64 each (global 128),
# on free 127.0.0.1 ports. Prints each run's ms/step (Fit's whole epoch over
# the steps, data feeding included) and the ratio; medians over REPS runs.
#
#   bench/run_multi_worker.sh                 # 1 epoch (468 steps), 3 reps: about a minute
#   REPS=5 EPOCHS=2 bench/run_multi_worker.sh
#
# On this 2-core machine the two workers share the cores, so the ideal ratio
# is about 1 (half the compute each, twice the processes) plus the all-reduce
# of 101,770 floats (398 KiB) per step over loopback.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS="${REPS:-3}"
EPOCHS="${EPOCHS:-1}"
OUT_DIR="${OUT_DIR:-$(mktemp -d -t tensorgrid-mwm.XXXXXX)}"
if [[ -z "${SKIP_BUILD:-}" ]]; then
  bazel build --config=opt //examples:multi_worker_fashion_mnist >"$OUT_DIR/build.log" 2>&1 || {
    tail -40 "$OUT_DIR/build.log"
    exit 1
  }
fi
BIN="$(bazel info --config=opt bazel-bin 2>/dev/null)/examples/multi_worker_fashion_mnist"

port() { python3 tests/free_ports.py 1; }
ms_per_step() { sed -nE 's/^worker 0: [0-9]+ steps, ([0-9.]+) ms\/step.*/\1/p' "$1"; }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
one=() two=()
for ((rep = 1; rep <= REPS; rep++)); do
  timeout 600 "$BIN" --workers="127.0.0.1:$(port)" --task_index=0 --batch_size=128 \
    --epochs="$EPOCHS" >"$OUT_DIR/one_$rep.log" 2>&1
  one+=("$(ms_per_step "$OUT_DIR/one_$rep.log")")
  workers="127.0.0.1:$(port),127.0.0.1:$(port)"
  timeout 600 "$BIN" --workers="$workers" --task_index=1 --batch_size=64 --epochs="$EPOCHS" \
    >"$OUT_DIR/two_1_$rep.log" 2>&1 &
  peer=$!
  timeout 600 "$BIN" --workers="$workers" --task_index=0 --batch_size=64 --epochs="$EPOCHS" \
    >"$OUT_DIR/two_0_$rep.log" 2>&1
  wait "$peer"
  two+=("$(ms_per_step "$OUT_DIR/two_0_$rep.log")")
done
m1="$(printf '%s\n' "${one[@]}" | median)"
m2="$(printf '%s\n' "${two[@]}" | median)"
echo "MultiWorkerMirrored step time, global batch 128, $REPS reps (load before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '  1 worker  (batch 128)      %8s ms/step   runs: %s\n' "$m1" "${one[*]}"
printf '  2 workers (64 + 64)        %8s ms/step   runs: %s\n' "$m2" "${two[*]}"
awk -v a="$m1" -v b="$m2" 'BEGIN { printf "  ratio 2 workers / 1 worker  %.2f\n", b / a }'
grep -h "test_accuracy" "$OUT_DIR"/one_1.log "$OUT_DIR"/two_0_1.log | sed 's/^/  /'
