#!/usr/bin/env bash
# Runs one test binary many times under load, to find flakes a single run
# rarely shows (docs/BUILDING.md). A multi-process test that passes here
# with busy loops beside it is one that survives a slow, shared CI machine.
#
#   bash scripts/stress.sh //distributed/rpc:grpc_session_test 100
#   PARALLEL=2 SPINNERS=3 bash scripts/stress.sh //distributed/rpc:grpc_session_test 50 --gtest_filter='GrpcSessionGcTest.*'
#
# Builds the target, then runs its binary RUNS times, PARALLEL (default 2)
# at once, each with its own TEST_TMPDIR and a timeout of TIMEOUT seconds
# (default 600), while SPINNERS (default: the number of cores + 1) busy
# loops hold the CPUs. The outputs of failed runs stay in OUT_DIR (default
# a new directory under /tmp). Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { echo "usage: $0 //package:test RUNS [test flags...]" >&2; exit 2; }
target=$1 runs=$2
shift 2
PARALLEL=${PARALLEL:-2}
SPINNERS=${SPINNERS:-$(($(nproc) + 1))}
TIMEOUT=${TIMEOUT:-600}
OUT_DIR=${OUT_DIR:-$(mktemp -d -t tensorgrid-stress.XXXXXX)}
mkdir -p "$OUT_DIR"

bazel build "$target" >"$OUT_DIR/build.log" 2>&1 || { tail -n 30 "$OUT_DIR/build.log"; exit 1; }
pkg=${target#//}
pkg=${pkg%%:*}
binary="$(bazel info bazel-bin 2>/dev/null)/$pkg/${target##*:}"
runfiles="$binary.runfiles"
[[ -x "$binary" ]] || { echo "stress: no binary at $binary" >&2; exit 1; }

spinners=()
stop_spinners() {
  ((${#spinners[@]})) && kill "${spinners[@]}" 2>/dev/null
  wait "${spinners[@]}" 2>/dev/null
}
trap stop_spinners EXIT
for ((i = 0; i < SPINNERS; i++)); do
  bash -c 'while :; do :; done' &
  spinners+=($!)
done

one_run() {  # I: run the binary once; keep its output if it fails
  local dir="$OUT_DIR/run$1"
  mkdir -p "$dir/tmp"
  if (cd "$runfiles/tensorgrid" && TEST_TMPDIR="$dir/tmp" TEST_SRCDIR="$runfiles" \
    RUNFILES_DIR="$runfiles" timeout "$TIMEOUT" "$binary" "$@") >"$dir/out" 2>&1; then
    rm -rf "$dir"
  else
    echo "stress: run $1 failed: $dir/out"
  fi
}

for ((i = 1; i <= runs; i++)); do
  while (($(jobs -rp | wc -l) >= PARALLEL + SPINNERS)); do wait -n; done
  one_run "$i" "$@" &
done
while (($(jobs -rp | wc -l) > SPINNERS)); do wait -n; done

failed=$(find "$OUT_DIR" -maxdepth 1 -name 'run*' -type d | wc -l)
echo "$((runs - failed)) passed, $failed failed"
