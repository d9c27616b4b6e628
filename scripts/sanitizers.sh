#!/usr/bin/env bash
# The long checks CI has no time for, to run nightly or before a release
# (docs/sanitizers.md): every test under AddressSanitizer + UBSan, the
# concurrency tests under ThreadSanitizer, and every fuzz target for SECONDS
# (default 600). Ends with one "N passed, N failed" over all three.
#
#   bash scripts/sanitizers.sh          # about 2 hours on 2 cores, with an empty cache
#   bash scripts/sanitizers.sh 60       # fuzz 60 s per target
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
source scripts/stages.sh
stage bash scripts/test.sh --asan
stage bash scripts/test.sh --tsan
stage bash scripts/fuzz.sh "$seconds"
stages_summary
