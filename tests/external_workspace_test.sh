#!/usr/bin/env bash
# A Bazel workspace outside this checkout that uses it as
# local_repository(name = "tensorgrid"), set up with exactly the WORKSPACE
# snippet and .bazelrc lines docs/BUILDING.md gives, builds
# tests/consumer/matmul.cc against @tensorgrid and runs it.
#   $1 tests/consumer/matmul.cc   $2 third_party/workspace.bzl (finds the checkout)
#   $3 the sanitizer of this build (asan, tsan), if any: then it skips (the
#      outside workspace builds without it; this build's flags do not reach it).
#
# It runs a second Bazel, so it is tagged no-sandbox (the inner Bazel runs
# its own sandboxes and writes its disk cache) and external (it reads the
# whole checkout, not only its declared inputs: never cached). The inner
# Bazel has its own output root in TEST_TMPDIR and a disk cache that outlives
# the test, $TG_EXTERNAL_CACHE or ~/.cache/tensorgrid/bazel-disk-external:
# the first run compiles tensorgrid as @tensorgrid from scratch (its actions
# differ from the main build's, which run at other paths); later runs reuse it.
set -u
source "$(dirname "$0")/skip_lib.sh"
[ -z "${3:-}" ] || skip_test "built under --config=$3: the outside workspace would build without it"
program="$1"
checkout=$(cd "$(dirname "$(readlink -f "$2")")/.." && pwd)
home=$(getent passwd "$(id -u)" | cut -d: -f6)
cache="${TG_EXTERNAL_CACHE:-$home/.cache/tensorgrid/bazel-disk-external}"
limit="${TG_EXTERNAL_TIMEOUT:-3300}"  # seconds for the inner build
ws="$TEST_TMPDIR/consumer"
root="$TEST_TMPDIR/bazel-root"
mkdir -p "$ws" "$root" "$cache"

cat >"$ws/WORKSPACE" <<WORKSPACE
workspace(name = "consumer")

local_repository(name = "tensorgrid", path = "$checkout")

load("@tensorgrid//third_party:workspace.bzl", "tensorgrid_dependencies")

tensorgrid_dependencies()
WORKSPACE
cat >"$ws/.bazelrc" <<'BAZELRC'
build --cxxopt=-std=c++17 --host_cxxopt=-std=c++17
build --distinct_host_configuration=false
BAZELRC
cat >"$ws/BUILD" <<'BUILD'
cc_binary(
    name = "matmul",
    srcs = ["matmul.cc"],
    deps = [
        "@tensorgrid//client:client_session",
        "@tensorgrid//client:ops",
        "@tensorgrid//kernels:all_kernels",
    ],
)
BUILD
cp "$program" "$ws/matmul.cc"

# The inner Bazel: its own output root, no ~/.bazelrc (Debian's
# /etc/bazel/bazelrc stays: it points Bazel at its install and the JDK), and
# a server that ends soon after the test (the EXIT trap also stops it).
inner_bazel=(env -u TEST_TMPDIR HOME="$TEST_TMPDIR" bazel --output_user_root="$root" --nohome_rc
  --max_idle_secs=60)
trap '(cd "$ws" && "${inner_bazel[@]}" shutdown) >/dev/null 2>&1' EXIT

start=$(date +%s)
# At the limit, SIGINT as a user's ^C: Bazel stops the build and its compilers.
(cd "$ws" && timeout --signal=INT --kill-after=60 "$limit" "${inner_bazel[@]}" build \
  --disk_cache="$cache" --jobs=2 --nosandbox_debug //:matmul) >"$TEST_TMPDIR/build.log" 2>&1
status=$?
echo "inner build: exit $status after $(($(date +%s) - start)) s"
grep -E "processes:|Elapsed time" "$TEST_TMPDIR/build.log"
if [ $status -ne 0 ]; then
  echo "FAIL: the outside workspace did not build (exit $status; 124 is the $limit s limit):"
  tail -40 "$TEST_TMPDIR/build.log"
  exit 1
fi

out=$(timeout 60 "$ws/bazel-bin/matmul" 2>&1)
expected="y = Tensor<type: float shape: [2,2] values: 19 22 43 50>
total = Tensor<type: float shape: [] values: 134>"
if [ "$out" != "$expected" ]; then
  echo "FAIL: expected:"
  echo "$expected"
  echo "got:"
  echo "$out"
  exit 1
fi
echo "ok: the outside workspace's program printed the product and its sum"
