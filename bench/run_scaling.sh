#!/usr/bin/env bash
# The users' table, measured: one worker against W workers at the same global
# batch, each worker pinned with taskset to its own cores, for
#
#   mlp        MultiWorkerMirrored, examples/multi_worker_fashion_mnist
#              --hidden=500,500 (784-500-500-10, Adam 1e-3), global batch 128,
#              EPOCHS epochs; goal: 2 workers >= 1.8x one, 4 workers >= 3.4x
#   mobilenet  MultiWorkerMirrored, examples/mobilenet_fashion_mnist (alpha 1.0,
#              64 per replica, as the users ran it: the global batch grows with
#              the workers), EPOCHS epochs over TRAIN_EXAMPLES images;
#              goal: 2 workers >= 1.85x (the users saw 1.89x and 1.98x)
#   ps         between-graph training with 1 ps + W workers (examples/
#              distributed_fashion_mnist, 784-500-500-10, batch 32, Adam
#              1e-4), async and sync (--is_sync), STEPS global steps, against
#              examples/fashion_mnist in one process and against the bound
#              t = c + 2P/B per worker step (bench/run_replicated.sh: c from the
#              one process on a task's cores, B the loopback TCP stream at
#              64 MiB measured here); goal: async >= 0.9, sync >= 0.8 of it
#
# W is 2, and 4 as well where the machine has at least 8 cores. Every run of
# a table gives each process nproc / W cores (nproc / (W + 1) with a ps),
# the one-worker run included, so one worker and W workers have the same
# cores each. Where there are fewer cores than processes (the ps table on a
# 2-core machine), the processes share them and the table says so: such a
# figure is not a scaling figure. Speed-up: one worker's training time over
# W workers' (the sum of Fit's epoch times of worker 0); efficiency:
# speed-up / W. Test accuracies are printed side by side (the goal: within
# 0.5 points after the same epochs).
#
#   bench/run_scaling.sh                              # mlp and ps: 2-3 minutes here
#   MODELS="mlp mobilenet ps" bench/run_scaling.sh    # mobilenet: 5-10 minutes more here
#   SKIP_BUILD=1 BIN_DIR=/path/bin DATA_DIR=/path/fashion-mnist bench/run_scaling.sh
#       # carried binaries (BIN_DIR/examples/..., BIN_DIR/bench/recv_tensor_benchmark)
#       # and data, as scripts/gpu_check.sh scaling bundles them for the 16-core machine
#
# Raw outputs stay in OUT_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

# The table is about CPU cores: on the GPU machine, multi_worker_fashion_mnist
# would otherwise put each worker's replica on the GPU (as TensorFlow does).
export CUDA_VISIBLE_DEVICES=""

NPROC=$(nproc)
MODELS="${MODELS:-mlp ps}"
EPOCHS="${EPOCHS:-1}"
STEPS="${STEPS:-1000}"
TRAIN_EXAMPLES="${TRAIN_EXAMPLES:-12800}"
WORKER_COUNTS="${WORKER_COUNTS:-$( ((NPROC >= 8)) && echo "2 4" || echo 2)}"
OUT_DIR="${OUT_DIR:-$(mktemp -d -t tensorgrid-scaling.XXXXXX)}"
DATA=()  # every example's --data_dir, when DATA_DIR is set
[[ -n "${DATA_DIR:-}" ]] && DATA=(--data_dir="$DATA_DIR")
mkdir -p "$OUT_DIR"
command -v taskset >/dev/null || { echo "run_scaling: taskset (util-linux) is missing" >&2; exit 1; }

if [[ -z "${SKIP_BUILD:-}" ]]; then
  bazel build --config=opt //examples:multi_worker_fashion_mnist //examples:mobilenet_fashion_mnist \
    //examples:fashion_mnist //examples:distributed_fashion_mnist //bench:recv_tensor_benchmark \
    >"$OUT_DIR/build.log" 2>&1 || { tail -40 "$OUT_DIR/build.log"; exit 1; }
fi
BIN_DIR="${BIN_DIR:-$(bazel info --config=opt bazel-bin 2>/dev/null)}"

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
if awk -v l="${LOAD_BEFORE%% *}" 'BEGIN { exit !(l > 1.0) }'; then
  echo "warning: load average is $LOAD_BEFORE; other work will skew the numbers" >&2
fi
free_ports() { python3 tests/free_ports.py "$1"; }
# The k-th of n equal core ranges ("0-7"), or "" when n processes do not fit.
cpus() {
  local k=$1 n=$2 per=$((NPROC / $2))
  ((per > 0)) && echo "$((k * per))-$((k * per + per - 1))"
}
pinned() {  # CPUS CMD...: CMD under taskset, or as is when CPUS is empty
  local c=$1
  shift
  if [[ -n "$c" ]]; then taskset -c "$c" "$@"; else "$@"; fi
}
train_seconds() { sed -nE 's/^epoch [0-9]+\/[0-9]+: [0-9]+ steps in ([0-9.]+) s,.*/\1/p' "$1" |
  awk '{ s += $1 } END { print s + 0 }'; }
accuracy() { sed -nE 's/.*test_accuracy=([0-9.]+).*/\1/p' "$1" | head -1; }

# MultiWorkerMirrored: NAME W BINARY FLAGS... -> $OUT_DIR/NAME-w<W>-<k>.out,
# worker k on the k-th of the table's $W core ranges (one worker alone gets
# what each of W gets), TF_CONFIG from free ports.
mwms() {
  local name=$1 w=$2 bin=$3 k pids=() hosts=""
  shift 3
  for p in $(free_ports "$w"); do hosts+="${hosts:+, }\"127.0.0.1:$p\""; done
  for ((k = 0; k < w; k++)); do
    TF_CONFIG="{\"cluster\": {\"worker\": [$hosts]}, \"task\": {\"type\": \"worker\", \"index\": $k}}" \
      timeout 3600 taskset -c "$(cpus "$k" "$W")" "$bin" "$@" \
      >"$OUT_DIR/$name-w$w-$k.out" 2>&1 &
    pids+=($!)
  done
  local failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  ((failed == 0)) || { tail -20 "$OUT_DIR/$name-w$w-0.out" >&2; return 1; }
}

ROWS="$OUT_DIR/rows.tsv"
: >"$ROWS"
row() { local IFS=$'\t'; echo "$*" >>"$ROWS"; }

for W in $WORKER_COUNTS; do
  per=$((NPROC / W))
  if [[ " $MODELS " == *" mlp "* ]]; then
    echo "mlp: 1 worker, then $W workers, $per core(s) each ..." >&2
    common=(--hidden=500,500 --epochs="$EPOCHS" "${DATA[@]}")
    mwms mlp1of$W 1 "$BIN_DIR/examples/multi_worker_fashion_mnist" "${common[@]}" --batch_size=128
    mwms mlp "$W" "$BIN_DIR/examples/multi_worker_fashion_mnist" "${common[@]}" \
      --batch_size=$((128 / W))
    row mlp "$W" "$per" "$(train_seconds "$OUT_DIR/mlp1of$W-w1-0.out")" \
      "$(train_seconds "$OUT_DIR/mlp-w$W-0.out")" "$(accuracy "$OUT_DIR/mlp1of$W-w1-0.out")" \
      "$(accuracy "$OUT_DIR/mlp-w$W-0.out")"
  fi
  if [[ " $MODELS " == *" mobilenet "* ]]; then
    echo "mobilenet: 1 worker, then $W workers, $per core(s) each ..." >&2
    common=(--epochs="$EPOCHS" --train_examples="$TRAIN_EXAMPLES" --test_examples=2000
      --intra_op_threads="$per" --batch_size=64 --bn_momentum=0.9 "${DATA[@]}")
    mwms mobilenet1of$W 1 "$BIN_DIR/examples/mobilenet_fashion_mnist" "${common[@]}"
    mwms mobilenet "$W" "$BIN_DIR/examples/mobilenet_fashion_mnist" "${common[@]}"
    row mobilenet "$W" "$per" "$(train_seconds "$OUT_DIR/mobilenet1of$W-w1-0.out")" \
      "$(train_seconds "$OUT_DIR/mobilenet-w$W-0.out")" \
      "$(accuracy "$OUT_DIR/mobilenet1of$W-w1-0.out")" "$(accuracy "$OUT_DIR/mobilenet-w$W-0.out")"
  fi
  if [[ " $MODELS " == *" ps "* ]]; then
    tasks=$((W + 1))
    per=$((NPROC / tasks))
    pins=""
    if ((per > 0)); then
      for ((k = 0; k < tasks; k++)); do pins+="${pins:+ }$(cpus "$k" "$tasks")"; done
    fi
    echo "ps: one process, then 1 ps + $W workers async and sync, ${pins:-no pinning} ..." >&2
    pinned "$(cpus 0 "$tasks")" "$BIN_DIR/examples/fashion_mnist" --steps="$STEPS" \
      --log_every="$STEPS" --threads="$((per > 0 ? per : 0))" "${DATA[@]}" \
      >"$OUT_DIR/ps-local-w$W.out" 2>&1
    for mode in async sync; do
      flags=(--steps="$STEPS" --log_every="$STEPS" "${DATA[@]}")
      [[ $mode == sync ]] && flags+=(--is_sync)
      PS=1 WORKERS="$W" TIMEOUT=1800 PIN_CPUS="$pins" LOG_DIR="$OUT_DIR/ps-$mode-w$W" \
        BIN="$BIN_DIR/examples/distributed_fashion_mnist" \
        examples/run_distributed_fashion_mnist.sh "${flags[@]}" >"$OUT_DIR/ps-$mode-w$W.out" 2>&1 ||
        { tail -30 "$OUT_DIR/ps-$mode-w$W.out" >&2; exit 1; }
    done
    row ps "$W" "$per" "$OUT_DIR/ps-local-w$W.out" "$OUT_DIR/ps-async-w$W/worker0.out" \
      "$OUT_DIR/ps-sync-w$W/worker0.out"
  fi
done
if [[ " $MODELS " == *" ps "* ]]; then
  echo "loopback bandwidth: recv_tensor_benchmark's TCP stream at 64 MiB ..." >&2
  "$BIN_DIR/bench/recv_tensor_benchmark" --benchmark_filter='BM_TcpStream/bytes:67108864' \
    --benchmark_min_time=0.2 --benchmark_out="$OUT_DIR/bandwidth.json" \
    --benchmark_out_format=json >"$OUT_DIR/bandwidth.txt" 2>&1 || { cat "$OUT_DIR/bandwidth.txt"; exit 1; }
fi

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo '?'):" \
  "$NPROC cores, $(lscpu | sed -n 's/^Model name: *//p'); load average before: $LOAD_BEFORE," \
  "after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$ROWS" "$OUT_DIR" "$NPROC" "$EPOCHS" "$STEPS" "$TRAIN_EXAMPLES" <<'EOF'
import json, re, sys

rows_path, out_dir, nproc, epochs, steps, train_examples = sys.argv[1:7]
nproc = int(nproc)
PARAM_BYTES = (784 * 500 + 500 + 500 * 500 + 500 + 500 * 10 + 10) * 4
GOALS = {("mlp", 2): 1.8, ("mlp", 4): 3.4, ("mobilenet", 2): 1.85}

def pinning(w, per, tasks):
    return f"{per} core(s) each" if per > 0 else f"{tasks} processes share {nproc} cores: not a scaling figure"

def tcp_stream():
    for r in json.load(open(f"{out_dir}/bandwidth.json"))["benchmarks"]:
        if r["name"].startswith("BM_TcpStream/bytes:67108864/") and r["name"].endswith("_median"):
            return r["bytes_per_second"]
    return json.load(open(f"{out_dir}/bandwidth.json"))["benchmarks"][0]["bytes_per_second"]

def local_rate(path):
    m = re.search(r"trained steps \d+\.\.\d+ in [\d.]+ s: ([\d.]+) steps/s", open(path).read())
    return float(m.group(1)) if m else None

def global_rate(path):
    m = re.search(r"worker 0: trained \d+ steps in ([\d.]+) s .*global step now (\d+)", open(path).read())
    return int(m.group(2)) / float(m.group(1)) if m else None

lines = [l.rstrip("\n").split("\t") for l in open(rows_path) if l.strip()]
mw = [l for l in lines if l[0] in ("mlp", "mobilenet")]
if mw:
    print()
    print("| MultiWorkerMirrored | workers | pinning | 1 worker | W workers | speed-up | efficiency | goal | test accuracy 1 / W |")
    print("|---|---|---|---|---|---|---|---|---|")
    for model, w, per, one, many, acc1, accw in mw:
        w, per, one, many = int(w), int(per), float(one), float(many)
        what = (f"784-500-500-10, global batch 128, {epochs} epoch(s)" if model == "mlp" else
                f"MobileNetV2, 64 per replica, {epochs} epoch(s) over {train_examples} images")
        speed = one / many if many else 0
        goal = GOALS.get((model, w))
        verdict = "-" if goal is None else (f">= {goal}x: met" if speed >= goal else f">= {goal}x: not met")
        print(f"| {what} | {w} | {pinning(w, per, w)} | {one:.1f} s | {many:.1f} s | {speed:.2f}x | "
              f"{speed / w:.2f} | {verdict} | {acc1} / {accw} |")
ps = [l for l in lines if l[0] == "ps"]
if ps:
    b = tcp_stream()
    print()
    print(f"Parameter servers: 1 ps + W workers, {steps} global steps of batch 32 per worker step; "
          f"loopback TCP stream {b / 1e9:.2f} GB/s")
    print()
    print("| between-graph | workers | pinning | global steps/s | vs one process | bound | vs bound | goal |")
    print("|---|---|---|---|---|---|---|---|")
    for _, w, per, local_path, async_path, sync_path in ps:
        w, per = int(w), int(per)
        local = local_rate(local_path)
        t = 1 / local + 2 * PARAM_BYTES / b
        print(f"| one process | 1 | {pinning(1, per, w + 1)} | {local:.1f} | 1.00x | - | - | - |")
        for mode, path, bound, goal in (("async", async_path, w / t, 0.9), ("sync", sync_path, 1 / t, 0.8)):
            rate = global_rate(path)
            if rate is None:
                print(f"| {mode} | {w} | - | failed: see {path} | | | | |")
                continue
            verdict = f">= {goal}: " + ("met" if rate / bound >= goal else "not met")
            print(f"| {mode} | {w} | {pinning(w, per, w + 1)} | {rate:.1f} | {rate / local:.2f}x | "
                  f"{bound:.1f} | {rate / bound:.2f} | {verdict} |")
    print()
    print("bound per worker step t = c + 2P/B: c = 1 / (one process's steps/s on a task's cores),")
    print(f"P = {PARAM_BYTES:,} bytes; async: W/t global steps/s, sync: 1/t (each global step is")
    print("one step of every worker)")
EOF
echo
echo "raw results: $OUT_DIR"
