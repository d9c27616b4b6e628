#!/usr/bin/env bash
# Runs on the GPU machine, from the bundle scripts/gpu_check.sh builds
# (copied there as .gpu_bundle/run.sh): every GPU test, then the GPU
# benchmark. Usage: tar xJf .gpu_bundle.tar.xz && bash .gpu_bundle/run.sh
# OUT_DIR. Ends with
# "N passed, N failed" over the test binaries. TG_TEST_TIMEOUT (seconds, 300
# by default) bounds each test binary.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/results}
mkdir -p "$out"
log=$out/gpu_check.log
exec > >(tee "$log") 2>&1

source "$here/cuda_libs.sh" "$here" || exit 1
echo "gpu_run: $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true

passed=0 failed=0
while read -r t; do
  echo "=== $t"
  if timeout "${TG_TEST_TIMEOUT:-300}" "$here/bin/$t" --gtest_output="xml:$out/$t.xml"; then
    passed=$((passed + 1))
  else
    echo "gpu_run: $t FAILED"
    failed=$((failed + 1))
  fi
done < "$here/tests.txt"

echo "=== gpu_benchmark"
timeout 300 "$here/bin/gpu_benchmark" || echo "gpu_run: gpu_benchmark FAILED"
echo "=== gpu_benchmark --conv_only on cuDNN's legacy API (TG_CUDNN_LEGACY_API=1): the graph API's before/after"
TG_CUDNN_LEGACY_API=1 timeout 200 "$here/bin/gpu_benchmark" --conv_only ||
  echo "gpu_run: gpu_benchmark --conv_only FAILED"
echo "=== gpu_mlp_torch.py (the peer of the MLP rows)"
timeout 120 python3 "$here/gpu_mlp_torch.py" || echo "gpu_run: gpu_mlp_torch.py FAILED"
echo "=== conv_torch.py --device=cuda (the peer of the convolution rows)"
timeout 180 python3 "$here/conv_torch.py" --device=cuda --min_time=0.3 ||
  echo "gpu_run: conv_torch.py FAILED"
echo "=== MobileNetV2 training step on the GPU (28x28x1, batch 64): tensorgrid, tensorgrid on cuDNN's legacy API, then PyTorch"
timeout 180 "$here/bin/mobilenet_step" --device=gpu --batch=64 ||
  echo "gpu_run: mobilenet_step FAILED"
TG_CUDNN_LEGACY_API=1 timeout 180 "$here/bin/mobilenet_step" --device=gpu --batch=64 ||
  echo "gpu_run: mobilenet_step on the legacy API FAILED"
timeout 180 python3 "$here/mobilenet_torch.py" --device=cuda --batch=64 ||
  echo "gpu_run: mobilenet_torch.py FAILED"
echo "=== matmul_onednn_benchmark on 8 cores (CPU: MatMul's sgemm blocks against Eigen and oneDNN's OpenMP sgemm)"
taskset -c 0-7 timeout 150 "$here/bin/matmul_onednn_benchmark" --benchmark_filter='threads:8' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true ||
  echo "gpu_run: matmul_onednn_benchmark FAILED"
echo "$passed passed, $failed failed"
