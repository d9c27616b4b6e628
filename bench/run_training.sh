#!/usr/bin/env bash
# Training speed side by side: examples/fashion_mnist (tensorgrid, built
# optimized) against bench/fashion_mnist_peer.py (PyTorch from Debian's
# python3-torch), the same model, optimizer, batch and data, for STEPS steps
# each, with 1 and with 2 threads, REPS times interleaved; prints the medians.
#
#   bench/run_training.sh                    # 500 steps x 3 reps x 1 and 2 threads: 1.5-5 minutes
#   STEPS=6000 REPS=1 bench/run_training.sh  # also the accuracy after 6,000 steps
#   SKIP_BUILD=1 THREADS="1" bench/run_training.sh
#   OMP_WAIT_POLICY=PASSIVE bench/run_training.sh
#
# The last: with 2 threads PyTorch's OpenMP threads spin at every barrier,
# which on a busy 2-core machine can cost it 10x; PASSIVE makes them sleep.
# Debian's libtorch runs on whichever libblas.so.3 the system provides; the
# reference BLAS (libblas3) makes it ~10x slower, so the peer uses OpenBLAS
# (libopenblas0-pthread, which libtorch recommends) when it is installed and
# says which it used. Raw output is kept in $OUT_DIR (default: a temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS="${STEPS:-500}"
REPS="${REPS:-3}"
THREADS="${THREADS:-1 2}"
OUT_DIR="${OUT_DIR:-$(mktemp -d -t tensorgrid-training.XXXXXX)}"
mkdir -p "$OUT_DIR"

if [[ -z "${SKIP_BUILD:-}" ]]; then
  bazel build --config=opt //examples:fashion_mnist >"$OUT_DIR/build.log" 2>&1 || {
    tail -40 "$OUT_DIR/build.log"
    exit 1
  }
fi
# bazel-bin follows whichever configuration built last; ask for ours.
BIN="$(bazel info --config=opt bazel-bin 2>/dev/null)/examples/fashion_mnist"

OPENBLAS=/usr/lib/x86_64-linux-gnu/openblas-pthread
if [[ -f "$OPENBLAS/libblas.so.3" ]]; then
  BLAS="OpenBLAS ($OPENBLAS)"
  PEER_ENV=(env LD_LIBRARY_PATH="$OPENBLAS")
else
  BLAS="the system's libblas.so.3 ($(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 || echo none)); apt-get install libopenblas0-pthread for OpenBLAS"
  PEER_ENV=(env)
fi

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
if awk -v l="${LOAD_BEFORE%% *}" 'BEGIN { exit !(l > 1.0) }'; then
  echo "warning: load average is $LOAD_BEFORE; other work will skew the numbers" >&2
fi
for rep in $(seq 1 "$REPS"); do
  for t in $THREADS; do
    echo "rep $rep/$REPS, $t thread(s): tensorgrid ..." >&2
    "$BIN" --steps="$STEPS" --log_every="$STEPS" --threads="$t" \
      >"$OUT_DIR/tensorgrid-t$t-r$rep.txt" 2>&1 || { cat "$OUT_DIR/tensorgrid-t$t-r$rep.txt"; exit 1; }
    echo "rep $rep/$REPS, $t thread(s): pytorch ..." >&2
    "${PEER_ENV[@]}" OPENBLAS_NUM_THREADS="$t" /usr/bin/python3 bench/fashion_mnist_peer.py \
      --steps="$STEPS" --log_every="$STEPS" --threads="$t" \
      >"$OUT_DIR/torch-t$t-r$rep.json" 2>"$OUT_DIR/torch-t$t-r$rep.txt" ||
      echo "{\"available\": false, \"reason\": \"fashion_mnist_peer.py failed, see $OUT_DIR/torch-t$t-r$rep.txt\"}" \
        >"$OUT_DIR/torch-t$t-r$rep.json"
  done
done

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); load average before: $LOAD_BEFORE," \
  "after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "pytorch: $(/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo missing), BLAS: $BLAS"
echo
python3 - "$OUT_DIR" "$STEPS" "$THREADS" <<'EOF'
import glob, json, re, statistics, sys

out_dir, steps, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
print(f"{steps} steps of batch 32, 784-500-500-10 MLP, Adam 1e-4; medians over repetitions")
print()
header = ("threads", "tensorgrid steps/s", "examples/s", "pytorch steps/s", "examples/s",
          "ratio", "test_accuracy tg / pytorch")
rows = []
for t in threads:
    tg, torch, tg_acc, torch_acc, why = [], [], [], [], ""
    for path in sorted(glob.glob(f"{out_dir}/tensorgrid-t{t}-r*.txt")):
        text = open(path).read()
        m = re.search(r"trained steps \d+\.\.\d+ in [\d.]+ s: ([\d.]+) steps/s", text)
        a = re.search(r"^test_accuracy=([\d.]+)$", text, re.M)
        if m: tg.append(float(m.group(1)))
        if a: tg_acc.append(a.group(1))
    for path in sorted(glob.glob(f"{out_dir}/torch-t{t}-r*.json")):
        r = json.load(open(path))
        if r.get("available"):
            torch.append(r["steps_per_s"])
            torch_acc.append(f"{r['test_accuracy']:.4f}")
        else:
            why = r.get("reason", "")
    tg_s = statistics.median(tg) if tg else None
    torch_s = statistics.median(torch) if torch else None
    rows.append((
        t,
        f"{tg_s:.1f}" if tg_s else "-", f"{tg_s * 32:.0f}" if tg_s else "-",
        f"{torch_s:.1f}" if torch_s else f"n/a ({why})", f"{torch_s * 32:.0f}" if torch_s else "-",
        f"{tg_s / torch_s:.2f}x" if tg_s and torch_s else "-",
        f"{','.join(sorted(set(tg_acc)))} / {','.join(sorted(set(torch_acc))) or '-'}",
    ))
widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
for r in [header] + rows:
    print(" | ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    if r is header:
        print("-+-".join("-" * w for w in widths))
print()
print("ratio = tensorgrid steps/s over pytorch steps/s (> 1: tensorgrid faster); the timed part is")
print("the training loop (batching included; loading and evaluation not)")
EOF
echo
echo "raw results: $OUT_DIR"
