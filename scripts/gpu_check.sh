#!/usr/bin/env bash
# GPU checks in two halves (docs/gpu.md):
#
#   bash scripts/gpu_check.sh            # here (CUDA toolkit, no GPU needed): builds
#                                        # .gpu_bundle.tar.xz — the GPU tests and
#                                        # benchmarks for x86-64-v3, the shared
#                                        # libraries a bare GPU machine lacks, run.sh
#   tar xJf .gpu_bundle.tar.xz && bash .gpu_bundle/run.sh OUT_DIR
#                                        # there: runs every GPU test and benchmark,
#                                        # writes OUT_DIR/gpu_check.log and one
#                                        # OUT_DIR/<target>.xml per test binary
#
# Each bundle is packed with xz: unpacked, oneDNN alone is 40 MB, and a device
# call carries 64 MiB at most.
#
#   bash scripts/gpu_check.sh scaling [MODELS]
#                                        # here: builds .scaling_bundle.tar.xz — the
#                                        # examples bench/run_scaling.sh runs for
#                                        # MODELS (default "mlp mobilenet ps"), the
#                                        # Fashion-MNIST files, the scripts, run.sh.
#                                        # All three pack to about 55 MB, at the edge
#                                        # of what a call carries with the tree: one
#                                        # or two models pack smaller
#   tar xJf .scaling_bundle.tar.xz && bash .scaling_bundle/run.sh OUT_DIR
#                                        # there: the users' table on 16 cores
#                                        # (OUT_DIR/scaling.log); a device call of
#                                        # its own (the two bundles together are
#                                        # over the 64 MiB a call carries)
#   bash .scaling_bundle/run.sh OUT_DIR gpu-examples
#                                        # there too: the Fashion-MNIST examples
#                                        # on the GPU (a few minutes; a bundle
#                                        # with "mlp" and "ps")
#
# The bundle is self-contained apart from the GPU machine's own driver, glibc,
# libstdc++ and CUDA libraries (cuBLAS is found there with ldconfig or under
# /usr/local/cuda*, /usr/lib and the Python nvidia-* wheels).
set -euo pipefail
cd "$(dirname "$0")/.."

# x86-64-v3 (AVX2) rather than -march=native: the binaries run on another
# machine. Everything of ours links statically into each binary.
FLAGS=(--config=opt --copt=-march=x86-64-v3 --dynamic_mode=off)
# Shared libraries the binaries in $1/bin (and below) need, into $1/lib,
# except those every Linux machine (or the GPU machine's CUDA install) has.
copy_libraries() {
  local skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libgcc_s|libstdc\+\+|libcublas|libcublasLt|libnccl|libcudnn)'
  find "$1/bin" -type f -perm -u+x -exec ldd {} \; | awk '/=> \// {print $1, $3}' |
    sort -u | while read -r name path; do
      if ! [[ $name =~ $skip ]]; then cp -L "$path" "$1/lib/$name"; fi
    done
  strip --strip-unneeded "$1"/lib/* 2>/dev/null || true
}

if [[ "${1:-}" == scaling ]]; then
  models=${2:-mlp mobilenet ps}
  TARGETS=()
  for m in $models; do
    case $m in
      mlp) TARGETS+=(//examples:multi_worker_fashion_mnist) ;;
      mobilenet) TARGETS+=(//examples:mobilenet_fashion_mnist) ;;
      ps) TARGETS+=(//examples:fashion_mnist //examples:distributed_fashion_mnist
        //bench:recv_tensor_benchmark) ;;
      *) echo "gpu_check: unknown model '$m' (mlp, mobilenet, ps)" >&2; exit 2 ;;
    esac
  done
  bazel build "${FLAGS[@]}" "${TARGETS[@]}"
  bundle=.scaling_bundle
  rm -rf "$bundle" "$bundle.tar.xz"
  mkdir -p "$bundle/bin/examples" "$bundle/bin/bench" "$bundle/lib" "$bundle/data" \
    "$bundle/bench" "$bundle/examples" "$bundle/tests"
  for t in "${TARGETS[@]}"; do
    pkg=${t%%:*}; name=${t##*:}
    cp "bazel-bin/${pkg#//}/$name" "$bundle/bin/${pkg#//}/$name"
    chmod u+w "$bundle/bin/${pkg#//}/$name"
    strip "$bundle/bin/${pkg#//}/$name"
  done
  copy_libraries "$bundle"
  cp /usr/share/datasets/fashion-mnist/*.gz "$bundle/data/"
  cp bench/run_scaling.sh "$bundle/bench/"
  mkdir -p "$bundle/scripts"
  cp scripts/gpu_examples.sh "$bundle/scripts/"
  cp scripts/cuda_libs.sh "$bundle/"
  cp examples/run_distributed_fashion_mnist.sh "$bundle/examples/"
  cp tests/free_ports.py "$bundle/tests/"
  cat >"$bundle/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the 16-core machine: bench/run_scaling.sh over the carried binaries and
# data (Usage: bash run.sh OUT_DIR [MODELS]), or with MODELS "gpu-examples"
# scripts/gpu_examples.sh (the examples on the GPU).
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/results}
mkdir -p "$out"
# The examples link the GPU device, hence the machine's cuBLAS.
source "$here/cuda_libs.sh" "$here" || exit 1
if [[ "${2:-}" == gpu-examples ]]; then
  BIN_DIR="$here/bin" DATA_DIR="$here/data" bash "$here/scripts/gpu_examples.sh" "$out" 2>&1 |
    tee "$out/gpu_examples.log"
  exit
fi
SKIP_BUILD=1 BIN_DIR="$here/bin" DATA_DIR="$here/data" OUT_DIR="$out/raw" \
  MODELS="${2:-$(cat "$here/models")}" bash "$here/bench/run_scaling.sh" 2>&1 | tee "$out/scaling.log"
RUN
  echo "$models" >"$bundle/models"
  tar cJf "$bundle.tar.xz" "$bundle"
  du -sh "$bundle" "$bundle.tar.xz"
  echo "gpu_check: scaling bundle ready in $bundle.tar.xz"
  exit 0
fi

# Every test of the GPU packages (each skips where there is no GPU).
mapfile -t TESTS < <(bazel query 'tests(//devices/gpu/... + //kernels/gpu/...)' 2>/dev/null)
BINARIES=(//bench:gpu_benchmark //bench:mobilenet_step //bench:matmul_onednn_benchmark)

bazel build "${FLAGS[@]}" "${TESTS[@]}" "${BINARIES[@]}"

bundle=.gpu_bundle
rm -rf "$bundle" "$bundle.tar.xz"
mkdir -p "$bundle/bin" "$bundle/lib"
for t in "${TESTS[@]}" "${BINARIES[@]}"; do
  pkg=${t%%:*}; name=${t##*:}
  cp "bazel-bin/${pkg#//}/$name" "$bundle/bin/$name"
  chmod u+w "$bundle/bin/$name"
  strip "$bundle/bin/$name"
done
copy_libraries "$bundle"
printf '%s\n' "${TESTS[@]##*:}" > "$bundle/tests.txt"
cp scripts/gpu_run.sh "$bundle/run.sh"
cp scripts/cuda_libs.sh "$bundle/"
cp bench/gpu_mlp_torch.py bench/conv_torch.py bench/mobilenet_torch.py "$bundle/"
tar cJf "$bundle.tar.xz" "$bundle"
du -sh "$bundle" "$bundle.tar.xz"
echo "gpu_check: bundle ready in $bundle.tar.xz ($(ls "$bundle/bin" | wc -l) binaries, $(ls "$bundle/lib" | wc -l) libraries)"
