// gpu_benchmark in a build without the CUDA toolkit (TG_CUDA=0, or none found).
#include <cstdio>

int main() {
  std::printf("gpu_benchmark: skipped: built without CUDA (see docs/gpu.md)\n");
  return 0;
}
