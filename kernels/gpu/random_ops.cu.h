// The random ops' CUDA kernels: Philox4x32-10 computed on the device, with
// the CPU kernels' stream layout (kernels/random/philox_random.h): the output
// is cut into groups of kResultsPerGroup values, group g starting
// g * kBlocksPerGroup blocks after `counter`. Uniform values therefore equal
// the CPU's bit for bit; normals differ only by the rounding of the device's
// log/sin/cos (and a truncated normal redrawn at the 2-stddev edge may take
// a neighbouring draw).
#ifndef TENSORGRID_KERNELS_GPU_RANDOM_OPS_CU_H_
#define TENSORGRID_KERNELS_GPU_RANDOM_OPS_CU_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace tensorgrid {
namespace gpu {

// Where a fill starts in a Philox stream.
struct PhiloxStart {
  uint32_t counter[4];
  uint32_t key[2];
};

enum class RandomDist { kUniform, kNormal, kTruncatedNormal };

// Values per group and blocks per group, as philox_random.h's
// distributions: uniform and normal 4 (float) or 2 (double) per block, one
// block a group; truncated normal the same values from 16 blocks a group.
int RandomResultsPerGroup(RandomDist dist, int element_size);
int RandomBlocksPerGroup(RandomDist dist);

// out[0, n) from the stream at `start`. T: float, double.
template <typename T>
cudaError_t LaunchRandom(RandomDist dist, PhiloxStart start, T* out, int64_t n, int sms,
                         cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_GPU_RANDOM_OPS_CU_H_
