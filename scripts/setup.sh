#!/usr/bin/env bash
# Installs the Debian packages tensorgrid builds and tests with, Fashion-MNIST
# included (only those missing).
# Safe to run any number of times. Needs root (or sudo) on Debian 12.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap bazel-rules-java bazel-platforms
  g++ pkg-config python3
  cmake  # tests/install_test.sh: a CMake project against the installed library
  python3-grpcio  # tests/attacker_test.py: an independent gRPC client
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libeigen3-dev libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev libtbb-dev zlib1g-dev
  libleveldb-dev  # the table format of TensorFlow's checkpoint index (core/util/tensor_bundle)
  libdnnl-dev  # oneDNN 2.6: the CPU convolution, pooling and batch-norm kernels (kernels/nn)
  dataset-fashion-mnist  # the demo's data: /usr/share/datasets/fashion-mnist (docs/data.md)
  # tests/slurm_test.sh: a real Slurm (slurmctld, slurmd, srun) and its munged,
  # started by the test in a temporary directory (root only)
  slurm-wlm munge
  nftables  # tests/netns_training_test.sh: 1% packet loss on its namespaces' links
  python3-jsonschema  # tests/tfjob_emulation_test.sh: examples/k8s/tfjob.yaml against the TFJob schema
  # The fuzzing build (--config=fuzz, scripts/fuzz.sh, docs/fuzzing.md):
  # clang with libFuzzer and the sanitizers' runtimes (only recommended by
  # clang, so named), the lld linker, and llvm-symbolizer for stack traces.
  clang-14 libclang-rt-14-dev lld-14 llvm-14
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The Fashion-MNIST tests report a skip without their data (right for a plain
# `bazel test`); after this set-up, missing data is a set-up failure instead.
if [ ! -d /usr/share/datasets/fashion-mnist ]; then
  echo "setup: /usr/share/datasets/fashion-mnist is missing (dataset-fashion-mnist)" >&2
  exit 1
fi
