#!/usr/bin/env bash
# scripts/install.sh, as a user runs it, into a temporary prefix (with the
# library, headers and tools //install built, passed as --from), then
# matmul.cc (tests/consumer/) built against the installed files two ways and
# run: with g++ and pkg-config, and as a CMake project with find_package; and
# the installed tg_launch starts the installed tg_server.
#   $1 scripts/install.sh   $2 the built libtensorgrid.so.X.Y.Z (include/, bin/ beside it)
#   $3 tests/consumer/matmul.cc   $4 tests/consumer/CMakeLists.txt
#   $5 the sanitizer of this build (asan, tsan), if any: then it skips.
set -u
source "$(dirname "$0")/skip_lib.sh"
[ -z "${5:-}" ] || skip_test "built under --config=$5: programs built without the sanitizer cannot link the library"
install_sh="$1"
built=$(dirname "$2")
consumer=$(dirname "$3")
work="$TEST_TMPDIR/work"
# No space in it: `$(pkg-config ...)` splits words at spaces, as with any package.
prefix="$TEST_TMPDIR/prefix"
mkdir -p "$work"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
expect() {  # expect NAME OUTPUT SUBSTRING (never empty)
  if [ -z "$3" ] || [[ "$2" != *"$3"* ]]; then
    fail "$1: expected '$3' in output:"
    echo "$2"
  else
    echo "ok: $1"
  fi
}
for tool in pkg-config cmake g++ readelf; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/setup.sh installs it)"
done
[ "$failures" -eq 0 ] || exit 1

# Bad arguments are refused with a message, and install nothing.
out=$(bash "$install_sh" 2>&1) && fail "no --prefix: exit 0"
expect "no --prefix" "$out" "--prefix=DIR is required"
out=$(bash "$install_sh" --prefix="$work/unused" --from="$work" 2>&1) && fail "empty --from: exit 0"
expect "empty --from" "$out" "must hold one libtensorgrid.so.X.Y.Z, include/ and bin/"
out=$(bash "$install_sh" --prefix="$work/unused" --frm=x 2>&1) && fail "unknown argument: exit 0"
expect "unknown argument" "$out" "unknown argument '--frm=x'"
[ ! -e "$work/unused" ] || fail "a refused install created its prefix"

# Twice: the second run replaces the first one's files.
for run in 1 2; do
  out=$(bash "$install_sh" --prefix="$prefix" --from="$built" 2>&1) || fail "install run $run: $out"
  expect "install run $run" "$out" "install: tensorgrid "
done
lib="$prefix/lib"
version=$(basename "$(readlink -f "$lib/libtensorgrid.so")")
version=${version#libtensorgrid.so.}
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "libtensorgrid.so does not lead to libtensorgrid.so.X.Y.Z ($version)"
[ "$(readlink "$lib/libtensorgrid.so.${version%%.*}")" = "libtensorgrid.so.$version" ] ||
  fail "libtensorgrid.so.${version%%.*} is not a link to libtensorgrid.so.$version"
expect "SONAME" "$(readelf -d "$lib/libtensorgrid.so.$version")" "[libtensorgrid.so.${version%%.*}]"
for header in client/client_session.h client/ops/standard_ops.h client/ops/math_ops.h \
  proto/graph.pb.h core/framework/tensor.h client/training/monitored_session.h; do
  [ -f "$prefix/include/$header" ] || fail "$header is not installed"
done

# The tools, and tg_launch finds the tg_server beside it: a one-worker
# cluster whose program sees it.
for tool in tg_server tg_launch tg_run tg_inspect; do
  [ -x "$prefix/bin/$tool" ] || fail "bin/$tool is not installed"
done
expect "installed tg_launch" \
  "$(timeout 120 "$prefix/bin/tg_launch" --workers=1 -- sh -c 'echo "cluster $TG_CLUSTER"' 2>&1)" \
  "cluster worker=localhost:"

# pkg-config, as README shows it.
export PKG_CONFIG_PATH="$lib/pkgconfig"
expect "pkg-config --modversion" "$(pkg-config --modversion tensorgrid 2>&1)" "$version"
if g++ -std=c++17 "$consumer/matmul.cc" $(pkg-config --cflags --libs tensorgrid) \
  -o "$work/matmul_pc" >"$work/pc.log" 2>&1; then
  expect "pkg-config program" "$("$work/matmul_pc" 2>&1)" \
    "y = Tensor<type: float shape: [2,2] values: 19 22 43 50>
total = Tensor<type: float shape: [] values: 134>"
else
  fail "g++ with pkg-config:"; cat "$work/pc.log"
fi

# CMake: find_package(tensorgrid 0.1 CONFIG) and tensorgrid::tensorgrid.
if cmake -S "$consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" 2>&1 &&
  cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1; then
  expect "CMake program" "$("$work/cmake/matmul" 2>&1)" \
    "y = Tensor<type: float shape: [2,2] values: 19 22 43 50>
total = Tensor<type: float shape: [] values: 134>"
else
  fail "the CMake project:"; cat "$work/cmake.log"
fi

# A newer major version than the installed one is refused.
mkdir -p "$work/newer"
printf 'cmake_minimum_required(VERSION 3.16)\nproject(newer CXX)\nfind_package(tensorgrid %s CONFIG REQUIRED)\n' \
  "$((${version%%.*} + 1)).0" >"$work/newer/CMakeLists.txt"
out=$(cmake -S "$work/newer" -B "$work/newer/build" -DCMAKE_PREFIX_PATH="$prefix" 2>&1) &&
  fail "find_package of the next major version succeeded"
expect "next major version refused" "$out" "$version"
exit $failures
