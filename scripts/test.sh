#!/usr/bin/env bash
# The README's test command, and exactly what CI runs (.ci/run):
#
#   bash scripts/test.sh           # CI: the three stages below, summed
#   bash scripts/test.sh --suite   # every test, gcc build (the first stage)
#   bash scripts/test.sh --tsan    # //tests:tsan under ThreadSanitizer (the second)
#   bash scripts/test.sh --asan    # every test under AddressSanitizer + UBSan
#
# With no argument it runs the suite, then the concurrency tests under
# ThreadSanitizer, then every fuzz target for 20 s (scripts/fuzz.sh 20), and
# ends with one "stage:" line per stage and the sum over them:
#   N skipped
#   N passed, N failed
# The whole suite under ASan does not fit CI's 90 minutes beside these; it
# runs from scripts/sanitizers.sh (docs/sanitizers.md).
#
# Each single run ends with two lines:
#   N skipped: //pkg:target (why), //pkg:target Suite.Case (why), ...
#   N passed, N failed
# N counts test cases: gtest cases, and one per shell test. Results come only
# from this run (its Build Event Protocol file); a test target without a
# result of this run, a target that failed to build, a package that failed to
# load, or a Bazel exit status nothing else explains counts as one failure,
# named on a "failed:" line above (scripts/count_tests.py). Skipped cases are
# neither passed nor failed. Exit status 0 only when nothing failed. The
# sanitizer runs build with clang-14 in output trees of their own (.bazelrc,
# docs/sanitizers.md).
set -uo pipefail
cd "$(dirname "$0")/.."
config=()
scope="//..."
case "${1:-}" in
  "")
    source scripts/stages.sh
    stage bash scripts/test.sh --suite
    stage bash scripts/test.sh --tsan
    stage bash scripts/fuzz.sh 20
    stages_summary
    exit
    ;;
  --suite) ;;
  --asan) config=(--config=asan) ;;
  --tsan) config=(--config=tsan); scope="//tests:tsan" ;;
  *)
    echo "usage: $0 [--suite | --asan | --tsan]" >&2
    exit 2
    ;;
esac
if ! bash scripts/setup.sh; then
  echo "failed: scripts/setup.sh"
  echo "0 skipped"
  echo "0 passed, 1 failed"
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bazel test "${config[@]}" "$scope" --keep_going --test_summary=short \
  --build_event_json_file="$work/events.json"
test_status=$?
# Every test target `bazel test` runs, so that one without a result is seen;
# with --keep_going the query names the packages that fail to load. (A
# pattern skips tests tagged manual; a test suite's own list does not.)
if [ "$scope" = "//..." ]; then
  query='tests(//...) except attr(tags, "\bmanual\b", //...)'
else
  query="tests($scope)"
fi
bazel query "$query" --keep_going >"$work/targets.txt" 2>"$work/query.err"
query_status=$?
python3 scripts/count_tests.py --events="$work/events.json" --test_status="$test_status" \
  --targets="$work/targets.txt" --query_status="$query_status" --query_errors="$work/query.err"
count_status=$?
if [ "$count_status" -gt 1 ]; then  # the counter itself broke before its summary
  echo "failed: scripts/count_tests.py exited $count_status"
  echo "0 skipped"
  echo "0 passed, 1 failed"
  exit 1
fi
exit "$count_status"
