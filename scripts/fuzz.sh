#!/usr/bin/env bash
# Fuzzes every target of tests/fuzz/ (docs/fuzzing.md) for SECONDS each
# (default 60) with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer
# (clang-14, bazel --config=fuzz), one after another, and says per target
# "ran N execs, no crash" or where the crash is. A crash (or leak, timeout,
# out-of-memory) is also copied into tests/fuzz/regressions/<target>/, where
# the ordinary test suite replays it once it is committed with its fix.
#
#   bash scripts/fuzz.sh                 # every target, 60 s each
#   bash scripts/fuzz.sh 600 graphdef    # one target, 10 minutes
#
# What the fuzzers find worth keeping accumulates in
# ~/.cache/tensorgrid/fuzz/<target>/corpus (FUZZ_WORK_DIR overrides), so a
# later run starts where this one stopped; tests/fuzz/corpus/<target> holds
# the committed seeds. Exits 1 when any target crashed. Ends with a line
# "N passed, N failed" (one per target), like scripts/test.sh.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=60
if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for f in tests/fuzz/*_fuzzer.cc; do
    t=$(basename "$f" _fuzzer.cc)
    targets+=("$t")
  done
fi

bash scripts/setup.sh || { echo "0 passed, ${#targets[@]} failed"; exit 1; }
labels=()
for t in "${targets[@]}"; do labels+=("//tests/fuzz:${t}_fuzzer"); done
if ! bazel build --config=fuzz "${labels[@]}"; then
  echo "fuzz: the fuzzing build failed"
  echo "0 passed, ${#targets[@]} failed"
  exit 1
fi
bin="$(bazel info --config=fuzz bazel-bin 2>/dev/null)/tests/fuzz"
# Stack traces with file names and lines.
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
work="${FUZZ_WORK_DIR:-$HOME/.cache/tensorgrid/fuzz}"

passed=0
failed=0
report=()
for t in "${targets[@]}"; do
  dir="$work/$t"
  rm -rf "$dir/artifacts"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  log="$dir/last_run.log"
  # The first directory takes what the fuzzer finds; the seeds and every
  # known crash are read too (a crash not fixed stops the run at once).
  inputs=("$dir/corpus" "tests/fuzz/corpus/$t")
  [ -d "tests/fuzz/regressions/$t" ] && inputs+=("tests/fuzz/regressions/$t")
  flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536
         -print_final_stats=1 -artifact_prefix="$dir/artifacts/")
  [ -f "tests/fuzz/$t.dict" ] && flags+=(-dict="tests/fuzz/$t.dict")
  echo "fuzz: $t for ${seconds}s (log: $log)"
  "$bin/${t}_fuzzer" "${flags[@]}" "${inputs[@]}" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  found=$(ls -t "$dir/artifacts" 2>/dev/null | grep -E '^(crash|leak|timeout|oom)-' | head -1)
  if [ "$rc" -eq 0 ] && [ -z "$found" ]; then
    passed=$((passed + 1))
    report+=("$t: ran ${execs:-?} execs (${rate:-?}/s), no crash")
  else
    failed=$((failed + 1))
    if [ -n "$found" ]; then
      mkdir -p "tests/fuzz/regressions/$t"
      cp "$dir/artifacts/$found" "tests/fuzz/regressions/$t/$found"
      report+=("$t: FAILED after ${execs:-?} execs: $found, copied to tests/fuzz/regressions/$t/ (log: $log)")
      grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz check failed|.*runtime error)' "$log" | head -3 |
        sed 's/^/    /' >&2
    else
      report+=("$t: FAILED (exit $rc, no crash file; log: $log)")
    fi
  fi
done

printf '%s\n' "${report[@]}"
if [ "$failed" -gt 0 ]; then
  echo "Reproduce: $bin/<target>_fuzzer <file>; fix, then commit the file with the fix."
fi
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
