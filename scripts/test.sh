#!/usr/bin/env bash
# Builds everything and runs every test; ends with "N passed, N failed"
# (N counts individual test cases: gtest cases, and one per shell test).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
bazel test //... --keep_going --test_summary=short 2>&1 | tee "$log"

passed=0
failed=0
# Summary lines look like "//core/graph:graph_test   (cached) PASSED in 0.1s".
while read -r target status; do
  xml="bazel-testlogs/${target#//}"
  xml="${xml/://}/test.xml"
  if [ "$status" = PASSED ] || [ "$status" = FAILED ]; then
    if [ -f "$xml" ]; then
      tests=$(grep -o '<testsuites[^>]*' "$xml" | grep -o ' tests="[0-9]*"' | grep -o '[0-9]*' | head -1)
      fails=$(grep -o '<testsuites[^>]*' "$xml" | grep -o ' failures="[0-9]*"' | grep -o '[0-9]*' | head -1)
      errs=$(grep -o '<testsuites[^>]*' "$xml" | grep -o ' errors="[0-9]*"' | grep -o '[0-9]*' | head -1)
      tests=${tests:-1}; fails=${fails:-0}; errs=${errs:-0}
      bad=$((fails + errs))
      if [ "$status" = FAILED ] && [ "$bad" -eq 0 ]; then bad=1; fi  # crashed before reporting
      if [ "$bad" -gt "$tests" ]; then tests=$bad; fi
      passed=$((passed + tests - bad))
      failed=$((failed + bad))
      continue
    fi
  fi
  if [ "$status" = PASSED ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done < <(sed -nE 's#^(//[^ ]+)[[:space:]]+(\(cached\) )?(PASSED|FAILED TO BUILD|FAILED|TIMEOUT|NO STATUS|FLAKY|INCOMPLETE).*#\1 \3#p' "$log" | awk '{print $1, $2}')

if ! grep -q "^//" "$log"; then failed=$((failed + 1)); fi  # nothing ran: build broke early
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
