#!/usr/bin/env bash
# All-reduce bus bandwidth on this machine, side by side: tensorgrid's
# CollectiveReduce across 2 and 4 tasks (bench/allreduce_benchmark) against
# torch.distributed's gloo, OpenMPI's MPI_Allreduce over TCP (only where
# mpirun and mpicc are installed) and a plain loopback TCP stream
# (bench/allreduce_peer.py), all at 4 KiB, 256 KiB, 4 MiB and 64 MiB.
#
#   bench/run_allreduce.sh                  # one run: about 2-4 minutes on 2 cores once built
#   REPS=3 bench/run_allreduce.sh           # medians of 3 runs, ours and the peers interleaved
#   SKIP_BUILD=1 RANKS=2 bench/run_allreduce.sh
#
# The peers need Debian's python3-torch (/usr/bin/python3); MPI is optional
# (apt-get install openmpi-bin libopenmpi-dev). See docs/PERFORMANCE.md,
# "All-reduce bus bandwidth".
set -euo pipefail
cd "$(dirname "$0")/.."

REPS="${REPS:-1}"
RANKS="${RANKS:-2,4}"
SIZES="${SIZES:-4096,262144,4194304,67108864}"
OUT_DIR="${OUT_DIR:-$(mktemp -d -t tensorgrid-allreduce.XXXXXX)}"
mkdir -p "$OUT_DIR"

if [[ -z "${SKIP_BUILD:-}" ]]; then
  bazel build --config=opt //bench:allreduce_benchmark >"$OUT_DIR/build.log" 2>&1 || {
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
for rep in $(seq 1 "$REPS"); do
  echo "rep $rep/$REPS: allreduce_benchmark (ranks $RANKS) ..." >&2
  "$BIN/allreduce_benchmark" --ranks="$RANKS" --sizes="$SIZES" \
    >"$OUT_DIR/tensorgrid-r$rep.txt" 2>"$OUT_DIR/tensorgrid-r$rep.err" ||
    { tail -20 "$OUT_DIR/tensorgrid-r$rep.err"; exit 1; }
  echo "rep $rep/$REPS: allreduce_peer.py (TCP, gloo, MPI) ..." >&2
  if [[ -x /usr/bin/python3 ]]; then
    /usr/bin/python3 bench/allreduce_peer.py --ranks="$RANKS" --sizes="$SIZES" \
      >"$OUT_DIR/peers-r$rep.txt" 2>"$OUT_DIR/peers-r$rep.err" ||
      echo "skip impl=peers reason=allreduce_peer.py failed, see $OUT_DIR/peers-r$rep.err" \
        >>"$OUT_DIR/peers-r$rep.txt"
  else
    echo "skip impl=peers reason=no /usr/bin/python3 (python3-torch)" >"$OUT_DIR/peers-r$rep.txt"
  fi
done

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); load average before: $LOAD_BEFORE," \
  "after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 bench/allreduce_report.py "$OUT_DIR"/tensorgrid-r*.txt "$OUT_DIR"/peers-r*.txt
echo
echo "raw results: $OUT_DIR"
