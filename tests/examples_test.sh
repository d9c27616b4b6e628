#!/usr/bin/env bash
# Runs each example and checks the numbers it prints.
set -u
hello="$1"
feed="$2"
failures=0
expect() {  # expect NAME OUTPUT SUBSTRING
  if [[ "$2" != *"$3"* ]]; then
    echo "FAIL: $1: expected '$3' in output:"
    echo "$2"
    failures=$((failures + 1))
  else
    echo "ok: $1"
  fi
}
out=$("$hello" 2>&1)
expect hello_matmul "$out" "shape: [1,1] values: 1>"
out=$("$feed" 2>&1)
expect feed_matmul_sum "$out" "shape: [2,2] values: 1 4 3 8>"
expect feed_matmul_sum "$out" "shape: [] values: 16>"
exit $failures
