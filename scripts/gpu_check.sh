#!/usr/bin/env bash
# GPU checks in two halves (docs/gpu.md):
#
#   bash scripts/gpu_check.sh            # here (CUDA toolkit, no GPU needed): builds
#                                        # .gpu_bundle/ — the GPU tests and benchmarks
#                                        # for x86-64-v3, the shared libraries a bare
#                                        # GPU machine lacks, and run.sh
#   bash .gpu_bundle/run.sh OUT_DIR      # there: runs every GPU test and benchmark,
#                                        # writes OUT_DIR/gpu_check.log and one
#                                        # OUT_DIR/<target>.xml per test binary
#
# The bundle is self-contained apart from the GPU machine's own driver, glibc,
# libstdc++ and CUDA libraries (cuBLAS is found there with ldconfig or under
# /usr/local/cuda*, /usr/lib and the Python nvidia-* wheels).
set -euo pipefail
cd "$(dirname "$0")/.."

# Every test of the GPU packages (each skips where there is no GPU).
mapfile -t TESTS < <(bazel query 'tests(//devices/gpu/... + //kernels/gpu/...)' 2>/dev/null)
BINARIES=(//bench:gpu_benchmark)

# x86-64-v3 (AVX2) rather than -march=native: the binaries run on another
# machine. Everything of ours links statically into each binary.
FLAGS=(--config=opt --copt=-march=x86-64-v3 --dynamic_mode=off)
bazel build "${FLAGS[@]}" "${TESTS[@]}" "${BINARIES[@]}"

bundle=.gpu_bundle
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
for t in "${TESTS[@]}" "${BINARIES[@]}"; do
  pkg=${t%%:*}; name=${t##*:}
  cp "bazel-bin/${pkg#//}/$name" "$bundle/bin/$name"
  chmod u+w "$bundle/bin/$name"
  strip "$bundle/bin/$name"
done
# Shared libraries the binaries need, except those every Linux machine (or
# the GPU machine's CUDA install) has.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libgcc_s|libstdc\+\+|libcublas|libcublasLt|libnccl|libcudnn)'
for b in "$bundle"/bin/*; do
  ldd "$b" | awk '/=> \// {print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ $name =~ $skip ]]; then cp -L "$path" "$bundle/lib/$name"; fi
done
strip --strip-unneeded "$bundle"/lib/* 2>/dev/null || true
printf '%s\n' "${TESTS[@]##*:}" > "$bundle/tests.txt"
cp scripts/gpu_run.sh "$bundle/run.sh"
cp bench/gpu_mlp_torch.py "$bundle/"
du -sh "$bundle"
echo "gpu_check: bundle ready in $bundle ($(ls "$bundle/bin" | wc -l) binaries, $(ls "$bundle/lib" | wc -l) libraries)"
