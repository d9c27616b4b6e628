#!/usr/bin/env bash
# examples/mirrored_linear_regression: MirroredStrategy on 2 CPU devices
# trains the migration guide's linear regression. Checks the replica count,
# a Fit line per epoch with a falling loss, and predictions for the guide's
# evaluation features that rise with them, near y = 0.2 x + 0.1.
#
# Usage: mirrored_linear_regression_test.sh EXAMPLE
set -u
BIN="$1"
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
out=$(timeout 120 "$BIN" --epochs=60 2>&1)
RC=$?
[[ $RC -eq 0 ]] || fail "exit status $RC: $out"
grep -q "^num_replicas_in_sync=2$" <<<"$out" || fail "no num_replicas_in_sync=2: $out"
[[ $(grep -cE "^epoch [0-9]+/60: 3 steps in [0-9.]+ s, loss " <<<"$out") -eq 60 ]] || fail "not 60 epoch lines: $out"
first=$(sed -nE 's|^epoch 1/60: 3 steps in [0-9.]+ s, loss ([0-9.e-]+),.*|\1|p' <<<"$out")
last=$(sed -nE 's|^epoch 60/60: 3 steps in [0-9.]+ s, loss ([0-9.e-]+),.*|\1|p' <<<"$out")
awk "BEGIN { exit !($last < $first / 10) }" </dev/null || fail "loss $first -> $last did not fall tenfold"
if [[ "$out" =~ predictions=\[([0-9.-]+),\ ([0-9.-]+),\ ([0-9.-]+)\] ]]; then
  p0=${BASH_REMATCH[1]} p1=${BASH_REMATCH[2]} p2=${BASH_REMATCH[3]}
  awk "BEGIN { exit !($p0 < $p1 && $p1 < $p2 && $p0 > 0.6 && $p2 < 1.5) }" </dev/null ||
    fail "predictions $p0 $p1 $p2 do not follow y = 0.2 x + 0.1 (0.9, 1.1, 1.3)"
  echo "ok: loss $first -> $last, predictions $p0 $p1 $p2"
else
  fail "no predictions line: $out"
fi
timeout 30 "$BIN" --epochs=0 >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "--epochs=0 should exit 2"
((failures == 0)) || exit 1
echo "PASS"
