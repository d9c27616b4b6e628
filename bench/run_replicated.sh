#!/usr/bin/env bash
# Replicated training speed on this machine: examples/distributed_fashion_mnist
# as 1 ps + 2 workers (async, then sync with --is_sync), each task a process on
# 127.0.0.1 started by examples/run_distributed_fashion_mnist.sh, against
# examples/fashion_mnist in one process, and against a bound computed from the
# local compute time and the loopback bandwidth measured in the same run by
# bench/recv_tensor_benchmark (its TCP stream row at 64 MiB).
#
#   bench/run_replicated.sh                         # 1,000 steps each, 1 rep: about 2-4 minutes
#   STEPS=3000 REPS=3 bench/run_replicated.sh       # medians of 3
#   SKIP_BUILD=1 MODES="local async" bench/run_replicated.sh
#   SKIP_BUILD=1 BIN_DIR=/tmp/old-bin bench/run_replicated.sh   # other binaries (A/B runs):
#                                     # examples/{fashion_mnist,distributed_fashion_mnist}
#                                     # and bench/recv_tensor_benchmark under BIN_DIR
#
# The bound, per worker step: t = c + 2 P / B, where c = 1 / (local steps/s
# with one thread: a worker's share of this 2-core machine), P = 648,010
# float parameters x 4 bytes (the weights read from the ps, the gradients
# sent back) and B = the TCP stream's bytes/s. One worker: 1/t steps/s. Two
# async workers in parallel: 2/t global steps/s. Two sync workers: 1/t global
# steps/s (each global step averages one step of each, 2 x 32 examples).
# It assumes every worker has a core and a link of its own and the ps costs
# nothing, so it is an upper bound, and an optimistic one on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS="${STEPS:-1000}"
REPS="${REPS:-1}"
MODES="${MODES:-local async sync}"
OUT_DIR="${OUT_DIR:-$(mktemp -d -t tensorgrid-replicated.XXXXXX)}"
mkdir -p "$OUT_DIR"

if [[ -z "${SKIP_BUILD:-}" ]]; then
  bazel build --config=opt //examples:fashion_mnist //examples:distributed_fashion_mnist \
    //bench:recv_tensor_benchmark >"$OUT_DIR/build.log" 2>&1 || {
    tail -40 "$OUT_DIR/build.log"
    exit 1
  }
fi
# bazel-bin follows whichever configuration built last; ask for ours.
BIN_DIR="${BIN_DIR:-$(bazel info --config=opt bazel-bin 2>/dev/null)}"

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
if awk -v l="${LOAD_BEFORE%% *}" 'BEGIN { exit !(l > 1.0) }'; then
  echo "warning: load average is $LOAD_BEFORE; other work will skew the numbers" >&2
fi

# 9 repetitions each (the benchmark's own setting); the medians are used.
echo "loopback bandwidth: recv_tensor_benchmark (TCP stream and RecvTensor, 64 MiB) ..." >&2
"$BIN_DIR/bench/recv_tensor_benchmark" \
  --benchmark_filter='BM_(TcpStream|RecvTensor)/bytes:67108864' \
  --benchmark_min_time=0.2 \
  --benchmark_out="$OUT_DIR/bandwidth.json" --benchmark_out_format=json \
  >"$OUT_DIR/bandwidth.txt" 2>&1 || { cat "$OUT_DIR/bandwidth.txt"; exit 1; }

for rep in $(seq 1 "$REPS"); do
  for mode in $MODES; do
    echo "rep $rep/$REPS: $mode, $STEPS steps ..." >&2
    case "$mode" in
      local | local1)
        threads=$([[ "$mode" == local1 ]] && echo 1 || echo 0)
        flags=(--steps="$STEPS" --log_every="$STEPS")
        [[ "$threads" == 1 ]] && flags+=(--threads=1)
        "$BIN_DIR/examples/fashion_mnist" "${flags[@]}" >"$OUT_DIR/$mode-r$rep.txt" 2>&1 ||
          { cat "$OUT_DIR/$mode-r$rep.txt"; exit 1; }
        ;;
      async | sync | async1)
        workers=$([[ "$mode" == async1 ]] && echo 1 || echo 2)
        flags=(--steps="$STEPS" --log_every="$STEPS")
        [[ "$mode" == sync ]] && flags+=(--is_sync)
        PS=1 WORKERS="$workers" TIMEOUT=600 BIN="$BIN_DIR/examples/distributed_fashion_mnist" \
          LOG_DIR="$OUT_DIR/$mode-r$rep" examples/run_distributed_fashion_mnist.sh "${flags[@]}" \
          >"$OUT_DIR/$mode-r$rep.txt" 2>&1 || { tail -40 "$OUT_DIR/$mode-r$rep.txt"; exit 1; }
        ;;
      *) echo "unknown mode $mode (local, local1, async, async1, sync)" >&2; exit 2 ;;
    esac
  done
done
# The bound needs the one-thread compute time; measure it if MODES did not.
if [[ " $MODES " != *" local1 "* ]]; then
  echo "compute time: fashion_mnist --threads=1, $STEPS steps ..." >&2
  "$BIN_DIR/examples/fashion_mnist" --steps="$STEPS" --log_every="$STEPS" --threads=1 \
    >"$OUT_DIR/local1-r1.txt" 2>&1 || { cat "$OUT_DIR/local1-r1.txt"; exit 1; }
fi

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); load average before: $LOAD_BEFORE," \
  "after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 - "$OUT_DIR" "$STEPS" "$MODES" <<'EOF'
import glob, json, re, statistics, sys

out_dir, steps, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
PARAM_BYTES = (784 * 500 + 500 + 500 * 500 + 500 + 500 * 10 + 10) * 4  # 2,592,040

def median_bps(name):
    runs = json.load(open(f"{out_dir}/bandwidth.json"))["benchmarks"]
    for r in runs:
        if r["name"].startswith(f"{name}/bytes:67108864/") and r["name"].endswith("_median"):
            return r["bytes_per_second"]
    return None

def local_rate(mode):  # steps/s from the summary line, median over reps
    rates = []
    for path in glob.glob(f"{out_dir}/{mode}-r*.txt"):
        m = re.search(r"trained steps \d+\.\.\d+ in [\d.]+ s: ([\d.]+) steps/s", open(path).read())
        if m: rates.append(float(m.group(1)))
    return statistics.median(rates) if rates else None

def global_rate(mode):  # the chief's global steps over its training seconds
    rates = []
    for path in glob.glob(f"{out_dir}/{mode}-r*/worker0.out"):
        m = re.search(r"worker 0: trained \d+ steps in ([\d.]+) s .*global step now (\d+)", open(path).read())
        if m: rates.append(int(m.group(2)) / float(m.group(1)))
    return statistics.median(rates) if rates else None

tcp, recv = median_bps("BM_TcpStream"), median_bps("BM_RecvTensor")
local, local1 = local_rate("local"), local_rate("local1")
compute = 1 / local1
transfer = 2 * PARAM_BYTES / tcp
t = compute + transfer
print(f"loopback, 64 MiB medians: TCP stream {tcp / 1e9:.2f} GB/s, RecvTensor {recv / 1e9:.2f} GB/s")
print(f"per worker step: compute {compute * 1e3:.2f} ms (1 / {local1:.1f} steps/s, one thread) + "
      f"2 x {PARAM_BYTES:,} bytes / TCP stream {transfer * 1e3:.2f} ms = {t * 1e3:.2f} ms")
print(f"  (at RecvTensor's rate the transfer would be {2 * PARAM_BYTES / recv * 1e3:.2f} ms)")
print()
bounds = {"local": None, "local1": None, "async1": 1 / t, "async": 2 / t, "sync": 1 / t}
batches = {"sync": 2}
what = {"local": "local, one process, default threads", "local1": "local, one process, 1 thread",
        "async1": "1 ps + 1 worker", "async": "1 ps + 2 workers, async", "sync": "1 ps + 2 workers, sync"}
header = ("mode", "global steps/s", "examples/s", "vs local", "bound steps/s", "vs bound")
rows = []
for mode in modes + ([] if "local1" in modes else ["local1"]):
    rate = local_rate(mode) if mode.startswith("local") else global_rate(mode)
    if rate is None:
        rows.append((what[mode], "failed", "-", "-", "-", "-"))
        continue
    b = bounds[mode]
    rows.append((what[mode], f"{rate:.1f}", f"{rate * 32 * batches.get(mode, 1):.0f}",
                 f"{rate / local:.2f}x" if local else "-",
                 f"{b:.1f}" if b else "-", f"{rate / b:.2f}" if b else "-"))
widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
for r in [header] + rows:
    print(" | ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    if r is header:
        print("-+-".join("-" * w for w in widths))
print()
print(f"{steps} (global) steps of batch 32 per worker step; medians over repetitions. Global steps/s:")
print("the chief's final global step over its training time. A sync global step is one step of")
print("each worker (2 x 32 examples). vs local: over the local run with default threads.")
EOF
echo
echo "raw results: $OUT_DIR"
