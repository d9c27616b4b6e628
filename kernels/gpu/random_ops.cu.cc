// Philox4x32-10 on the device, and the uniform, normal and truncated-normal
// fills of random_ops.cu.h: one thread per group, a grid-stride loop over
// groups; the arithmetic mirrors kernels/random/philox_random.h.
#include "kernels/gpu/random_ops.cu.h"

#include <cstdint>

#include "kernels/gpu/cwise_ops.cu.h"

namespace tensorgrid {
namespace gpu {
namespace {

constexpr int kThreads = 256;
constexpr uint32_t kKeyBumpA = 0x9E3779B9;
constexpr uint32_t kKeyBumpB = 0xBB67AE85;
constexpr uint32_t kMultiplierA = 0xD2511F53;
constexpr uint32_t kMultiplierB = 0xCD9E8D57;

// A Philox stream position on the device.
struct Philox {
  uint32_t c[4];
  uint32_t k[2];

  __device__ void Skip(uint64_t blocks) {
    uint64_t low = ((uint64_t{c[1]} << 32) | c[0]) + blocks;
    uint64_t high = (uint64_t{c[3]} << 32) | c[2];
    if (low < blocks) ++high;  // carry
    c[0] = static_cast<uint32_t>(low);
    c[1] = static_cast<uint32_t>(low >> 32);
    c[2] = static_cast<uint32_t>(high);
    c[3] = static_cast<uint32_t>(high >> 32);
  }

  // The block at the counter; then advances by one.
  __device__ void Next(uint32_t out[4]) {
    uint32_t b[4] = {c[0], c[1], c[2], c[3]};
    uint32_t key0 = k[0], key1 = k[1];
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        key0 += kKeyBumpA;
        key1 += kKeyBumpB;
      }
      const uint64_t p0 = uint64_t{kMultiplierA} * b[0];
      const uint64_t p1 = uint64_t{kMultiplierB} * b[2];
      const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ b[1] ^ key0;
      const uint32_t n1 = static_cast<uint32_t>(p1);
      const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ b[3] ^ key1;
      const uint32_t n3 = static_cast<uint32_t>(p0);
      b[0] = n0;
      b[1] = n1;
      b[2] = n2;
      b[3] = n3;
    }
    for (int i = 0; i < 4; ++i) out[i] = b[i];
    Skip(1);
  }
};

__device__ float ToFloat(uint32_t x) {
  return __uint_as_float(0x3f800000u | (x & 0x7fffffu)) - 1.0f;
}
__device__ double ToDouble(uint32_t hi, uint32_t lo) {
  const uint64_t bits =
      0x3ff0000000000000ull | (((uint64_t{hi} << 32) | lo) & 0x000fffffffffffffull);
  return __longlong_as_double(static_cast<long long>(bits)) - 1.0;
}

template <typename T>
__device__ void BoxMuller(T u1, T u2, T* out) {
  const T kTwoPi = static_cast<T>(6.283185307179586);
  const T kEpsilon = static_cast<T>(1e-7);
  if (u1 < kEpsilon) u1 = kEpsilon;
  const T radius = sqrt(T(-2) * log(u1));
  const T theta = kTwoPi * u2;
  out[0] = radius * sin(theta);
  out[1] = radius * cos(theta);
}

template <typename T>
struct PerBlock;  // values one block gives
template <>
struct PerBlock<float> {
  static constexpr int kCount = 4;
  __device__ static void Uniform(const uint32_t b[4], float* out) {
    for (int i = 0; i < 4; ++i) out[i] = ToFloat(b[i]);
  }
  __device__ static void Normal(const uint32_t b[4], float* out) {
    BoxMuller(ToFloat(b[0]), ToFloat(b[1]), out);
    BoxMuller(ToFloat(b[2]), ToFloat(b[3]), out + 2);
  }
};
template <>
struct PerBlock<double> {
  static constexpr int kCount = 2;
  __device__ static void Uniform(const uint32_t b[4], double* out) {
    out[0] = ToDouble(b[0], b[1]);
    out[1] = ToDouble(b[2], b[3]);
  }
  __device__ static void Normal(const uint32_t b[4], double* out) {
    BoxMuller(ToDouble(b[0], b[1]), ToDouble(b[2], b[3]), out);
  }
};

constexpr int kTruncatedBlocksPerGroup = 16;

template <typename T, RandomDist kDist>
__global__ void RandomKernel(PhiloxStart start, T* out, int64_t n) {
  constexpr int kGroup = PerBlock<T>::kCount;
  constexpr int kBlocks = kDist == RandomDist::kTruncatedNormal ? kTruncatedBlocksPerGroup : 1;
  const int64_t groups = (n + kGroup - 1) / kGroup;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Philox gen;
    for (int i = 0; i < 4; ++i) gen.c[i] = start.counter[i];
    gen.k[0] = start.key[0];
    gen.k[1] = start.key[1];
    gen.Skip(static_cast<uint64_t>(g) * kBlocks);
    T values[kGroup];
    uint32_t block[4];
    if constexpr (kDist == RandomDist::kUniform) {
      gen.Next(block);
      PerBlock<T>::Uniform(block, values);
    } else if constexpr (kDist == RandomDist::kNormal) {
      gen.Next(block);
      PerBlock<T>::Normal(block, values);
    } else {
      int filled = 0;
      while (filled < kGroup) {  // redraw until within 2 stddev
        T normals[kGroup];
        gen.Next(block);
        PerBlock<T>::Normal(block, normals);
        for (int i = 0; i < kGroup && filled < kGroup; ++i) {
          if (fabs(normals[i]) < T(2)) values[filled++] = normals[i];
        }
      }
    }
    const int64_t first = g * kGroup;
    for (int i = 0; i < kGroup && first + i < n; ++i) out[first + i] = values[i];
  }
}

template <typename T, RandomDist kDist>
cudaError_t Run(PhiloxStart start, T* out, int64_t n, int sms, cudaStream_t stream) {
  const int64_t groups = (n + PerBlock<T>::kCount - 1) / PerBlock<T>::kCount;
  RandomKernel<T, kDist><<<BlocksFor(groups, sms), kThreads, 0, stream>>>(start, out, n);
  return cudaGetLastError();
}

}  // namespace

int RandomResultsPerGroup(RandomDist dist, int element_size) { return element_size == 8 ? 2 : 4; }

int RandomBlocksPerGroup(RandomDist dist) {
  return dist == RandomDist::kTruncatedNormal ? kTruncatedBlocksPerGroup : 1;
}

template <typename T>
cudaError_t LaunchRandom(RandomDist dist, PhiloxStart start, T* out, int64_t n, int sms,
                         cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (dist) {
    case RandomDist::kUniform: return Run<T, RandomDist::kUniform>(start, out, n, sms, stream);
    case RandomDist::kNormal: return Run<T, RandomDist::kNormal>(start, out, n, sms, stream);
    case RandomDist::kTruncatedNormal:
      return Run<T, RandomDist::kTruncatedNormal>(start, out, n, sms, stream);
  }
  return cudaErrorInvalidValue;
}

template cudaError_t LaunchRandom<float>(RandomDist, PhiloxStart, float*, int64_t, int,
                                         cudaStream_t);
template cudaError_t LaunchRandom<double>(RandomDist, PhiloxStart, double*, int64_t, int,
                                          cudaStream_t);

}  // namespace gpu
}  // namespace tensorgrid
