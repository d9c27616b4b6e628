# shellcheck shell=bash
# For shell tests whose prerequisite (a data set, a tool) may be missing:
#
#   source "$(dirname "$0")/skip_lib.sh"
#   skip_without_fashion_mnist
#   command -v tc >/dev/null || skip_test "no tc command (iproute2)"
#
# skip_test WHY: ends the test as skipped, which is not a pass: writes Bazel's
# test.xml ($XML_OUTPUT_FILE) with one skipped case that says WHY, which
# scripts/test.sh counts and names as a skip; prints WHY; exits 0.
skip_test() {
  local why name
  why=$(sed -e 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g' <<<"$1")
  name="${TEST_TARGET:-$0}"
  echo "SKIPPED: $1"
  if [[ -n "${XML_OUTPUT_FILE:-}" ]]; then
    cat >"$XML_OUTPUT_FILE" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" errors="0" skipped="1">
  <testsuite name="$name" tests="1" failures="0" errors="0" skipped="1">
    <testcase name="$name" status="run" result="skipped">
      <skipped message="$why"/>
    </testcase>
  </testsuite>
</testsuites>
EOF
  fi
  exit 0
}

# Skips the test when Debian's Fashion-MNIST (dataset-fashion-mnist) is not
# installed.
skip_without_fashion_mnist() {
  [[ -d /usr/share/datasets/fashion-mnist ]] ||
    skip_test "no Fashion-MNIST data: install Debian's dataset-fashion-mnist"
}
