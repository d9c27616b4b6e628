#!/usr/bin/env bash
# Installs tensorgrid for programs built without Bazel (docs/BUILDING.md):
#
#   bash scripts/install.sh --prefix=DIR [--from=BUILT]
#
#   DIR/include/...                       the public headers, at the include paths
#                                         of the tree ("client/client_session.h",
#                                         "proto/graph.pb.h", "client/ops/math_ops.h")
#   DIR/lib/libtensorgrid.so.X.Y.Z        every kernel and session registered, SONAME
#   DIR/lib/libtensorgrid.so.X            libtensorgrid.so.X, and these two links
#   DIR/lib/libtensorgrid.so
#   DIR/lib/pkgconfig/tensorgrid.pc       pkg-config --cflags --libs tensorgrid
#   DIR/lib/cmake/tensorgrid/             find_package(tensorgrid CONFIG), tensorgrid::tensorgrid
#   DIR/bin/tg_server, tg_launch,         the command-line tools (docs/server.md,
#           tg_run, tg_inspect            docs/tg_launch.md, docs/tg_run.md, docs/checkpoints.md)
#
# Without --from it installs the Debian packages it needs (scripts/setup.sh)
# and builds the library, headers and tools (//install, optimized).
# --from=BUILT takes them already built: a directory holding
# libtensorgrid.so.X.Y.Z, include/ and bin/, as `bazel build //install:all`
# leaves them in bazel-bin/install
# (tests/install_test.sh installs that way). Safe to run again: it replaces
# the files it installed before.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  echo "usage: $0 --prefix=DIR [--from=BUILT]" >&2
  exit 2
}
prefix="" from=""
for arg in "$@"; do
  case "$arg" in
    --prefix=?*) prefix=${arg#--prefix=} ;;
    --from=?*) from=${arg#--from=} ;;
    *) echo "install: unknown argument '$arg'" >&2; usage ;;
  esac
done
[ -n "$prefix" ] || { echo "install: --prefix=DIR is required" >&2; usage; }
prefix=$(realpath -m "$prefix")  # absolute: the .pc file names it

if [ -z "$from" ]; then
  bash "$here/scripts/setup.sh"
  (cd "$here" && bazel build --config=opt //install:libtensorgrid //install:include //install:bin)
  from="$(cd "$here" && bazel info --config=opt bazel-bin)/install"
fi

# The library's file name carries its version: libtensorgrid.so.X.Y.Z.
libs=("$from"/libtensorgrid.so.*.*.*)
if [ ! -f "${libs[0]}" ] || [ ${#libs[@]} -ne 1 ] || [ ! -d "$from/include" ] || [ ! -d "$from/bin" ]; then
  echo "install: $from must hold one libtensorgrid.so.X.Y.Z, include/ and bin/ (bazel build //install:all)" >&2
  exit 1
fi
library=$(basename "${libs[0]}")
version=${library#libtensorgrid.so.}
major=${version%%.*}

mkdir -p "$prefix"
# Headers: copied file by file (following links: Bazel's sandbox and runfiles
# hold links to them), so a second run replaces them in place.
(cd "$from/include" && find -L . -name '*.h' -type f) | while read -r header; do
  install -D -m 0644 "$from/include/$header" "$prefix/include/${header#./}"
done

install -d "$prefix/lib/pkgconfig" "$prefix/lib/cmake/tensorgrid" "$prefix/bin"
for tool in "$from"/bin/*; do
  install -m 0755 "$tool" "$prefix/bin/$(basename "$tool")"
done
install -m 0755 "${libs[0]}" "$prefix/lib/$library"
ln -sfn "$library" "$prefix/lib/libtensorgrid.so.$major"
ln -sfn "libtensorgrid.so.$major" "$prefix/lib/libtensorgrid.so"

fill() {  # fill TEMPLATE DEST: the template with @PREFIX@, @VERSION@, @MAJOR@ filled in
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" \
    "$here/install/$1" >"$2"
}
fill tensorgrid.pc.in "$prefix/lib/pkgconfig/tensorgrid.pc"
fill tensorgridConfig.cmake.in "$prefix/lib/cmake/tensorgrid/tensorgridConfig.cmake"
fill tensorgridConfigVersion.cmake.in "$prefix/lib/cmake/tensorgrid/tensorgridConfigVersion.cmake"
echo "install: tensorgrid $version in $prefix"
