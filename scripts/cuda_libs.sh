# Sourced by the GPU bundles' scripts on the GPU machine (scripts/gpu_check.sh
# builds the bundles): puts the bundle's lib/ and then the directory of the
# machine's own cuBLAS (never carried: it is half a gigabyte) on
# LD_LIBRARY_PATH. Usage: source cuda_libs.sh BUNDLE_DIR. Returns 1, saying
# so, when the machine has no libcublas.so.13.
cuda_libs_bundle=$1
cublas=$(ldconfig -p | awk '/libcublas\.so\.13 /{print $NF; exit}')
if [ -z "$cublas" ]; then
  cublas=$(find /usr/local/cuda* /usr/lib /opt /usr/local/lib -name 'libcublas.so.13' 2>/dev/null |
    head -1)
fi
export LD_LIBRARY_PATH="$cuda_libs_bundle/lib${cublas:+:$(dirname "$cublas")}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -z "$cublas" ]; then
  echo "cuda_libs: libcublas.so.13 not found on this machine"
  return 1
fi
echo "cuda_libs: cuBLAS from $(dirname "$cublas")"
