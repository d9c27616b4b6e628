# shellcheck shell=bash
# Runs several commands that each end with "N passed, N failed" and sums
# them, for .ci/run and scripts/sanitizers.sh:
#
#   source scripts/stages.sh
#   stage bash scripts/test.sh
#   stage bash scripts/fuzz.sh 20
#   stages_summary     # "stage: ..." lines, then the totals "N skipped" and
#                      # "N passed, N failed"; returns 1 on a failure
#
# A stage that fails without printing its summary counts as one failure.
stages_passed=0
stages_failed=0
stages_skipped=0
stages_report=()

stage() {
  local log status last p f s
  log=$(mktemp)
  "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  s=$(grep -oE '^[0-9]+ skipped' "$log" | tail -1)
  s=${s%% *}
  s=${s:-0}
  stages_skipped=$((stages_skipped + s))
  rm -f "$log"
  if [ -z "$last" ]; then
    stages_failed=$((stages_failed + 1))
    stages_report+=("$*: exited $status without a summary (counted as 1 failed)")
    return
  fi
  p=${last%% passed*}
  f=${last#*, }
  f=${f%% failed*}
  if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1  # a failure its summary does not show
  fi
  stages_passed=$((stages_passed + p))
  stages_failed=$((stages_failed + f))
  stages_report+=("$*: $p passed, $f failed, $s skipped")
}

stages_summary() {
  local line
  for line in "${stages_report[@]}"; do echo "stage: $line"; done
  echo "${stages_skipped} skipped (named above, per stage)"
  echo "${stages_passed} passed, ${stages_failed} failed"
  [ "$stages_failed" -eq 0 ]
}
