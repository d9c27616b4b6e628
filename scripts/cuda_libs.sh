# Sourced by the GPU bundles' scripts on the GPU machine (scripts/gpu_check.sh
# builds the bundles): puts the bundle's lib/ and then the directories of the
# machine's own cuBLAS and cuDNN (never carried: half a gigabyte each) on
# LD_LIBRARY_PATH. Each is looked up with ldconfig, then under the CUDA
# install, /usr/lib, /opt and Python's nvidia-* wheels (where the GPU
# machine's cuDNN is). Usage: source cuda_libs.sh BUNDLE_DIR. Returns 1,
# saying so, when the machine has no libcublas.so.13 or no libcudnn.so.9.
cuda_libs_bundle=$1
cuda_libs_find() {  # the path of library $1, or nothing
  local found
  found=$(ldconfig -p | awk -v lib="$1" '$1 == lib {print $NF; exit}')
  if [ -z "$found" ]; then
    # shellcheck disable=SC2046  # the site directories are separate words
    found=$(find /usr/local/cuda* /usr/lib /opt /usr/local/lib \
      $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) \
      -name "$1" 2>/dev/null | head -1)
  fi
  echo "$found"
}
cublas=$(cuda_libs_find libcublas.so.13)
cudnn=$(cuda_libs_find libcudnn.so.9)
cuda_libs_path="$cuda_libs_bundle/lib"
for lib in "$cublas" "$cudnn"; do
  [ -n "$lib" ] && cuda_libs_path="$cuda_libs_path:$(dirname "$lib")"
done
export LD_LIBRARY_PATH="$cuda_libs_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
missing=""
[ -z "$cublas" ] && missing="$missing libcublas.so.13"
[ -z "$cudnn" ] && missing="$missing libcudnn.so.9"
if [ -n "$missing" ]; then
  echo "cuda_libs: not found on this machine:$missing"
  return 1
fi
echo "cuda_libs: cuBLAS from $(dirname "$cublas"), cuDNN from $(dirname "$cudnn")"
