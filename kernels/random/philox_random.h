// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2,
// 3", SC 2011), the counter-based generator TensorFlow's random ops use, and
// the distributions built on it.
//
// Each 128-bit counter value maps, under a 64-bit key, to one block of four
// 32-bit random words, so any position in the stream is reachable in O(1).
// That lets a kernel fill a large tensor from many threads and still produce
// exactly the values one thread would:
//
//   PhiloxRandom gen(seed, seed2);
//   gen.Skip(first_block);           // jump to this thread's part
//   PhiloxRandom::Block words = gen();
//
// A PhiloxRandom is a small value type and not thread-safe; GuardedPhilox
// (random_ops.cc) hands out disjoint ranges of one stream under a mutex.
#ifndef TENSORGRID_KERNELS_RANDOM_PHILOX_RANDOM_H_
#define TENSORGRID_KERNELS_RANDOM_PHILOX_RANDOM_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace tensorgrid {

class PhiloxRandom {
 public:
  using Block = std::array<uint32_t, 4>;
  using Key = std::array<uint32_t, 2>;

  // TensorFlow's seeding: `seed` is the key, `seed2` the counter's high half.
  PhiloxRandom(uint64_t seed, uint64_t seed2)
      : counter_{0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)},
        key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)} {}
  PhiloxRandom(const Block& counter, const Key& key) : counter_(counter), key_(key) {}

  // Advances by `blocks` blocks, as if operator() had been called that often.
  void Skip(uint64_t blocks) {
    uint64_t low = (uint64_t{counter_[1]} << 32 | counter_[0]) + blocks;
    uint64_t high = uint64_t{counter_[3]} << 32 | counter_[2];
    if (low < blocks) ++high;  // carry
    counter_ = {static_cast<uint32_t>(low), static_cast<uint32_t>(low >> 32),
                static_cast<uint32_t>(high), static_cast<uint32_t>(high >> 32)};
  }

  // The position in the stream and the key, e.g. for a device kernel that
  // computes the same blocks.
  const Block& counter() const { return counter_; }
  const Key& key() const { return key_; }

  // The block at the current counter; then advances by one.
  Block operator()() {
    Block block = counter_;
    Key key = key_;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        key[0] += kKeyBumpA;
        key[1] += kKeyBumpB;
      }
      block = Round(block, key);
    }
    Skip(1);
    return block;
  }

 private:
  static constexpr uint32_t kKeyBumpA = 0x9E3779B9;
  static constexpr uint32_t kKeyBumpB = 0xBB67AE85;
  static constexpr uint32_t kMultiplierA = 0xD2511F53;
  static constexpr uint32_t kMultiplierB = 0xCD9E8D57;

  static Block Round(const Block& c, const Key& k) {
    const uint64_t p0 = uint64_t{kMultiplierA} * c[0];
    const uint64_t p1 = uint64_t{kMultiplierB} * c[2];
    return {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
            static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }

  Block counter_;
  Key key_;
};

// A float uniform in [0, 1) from 23 random mantissa bits.
inline float Uint32ToFloat(uint32_t x) {
  const uint32_t bits = 0x3f800000u | (x & 0x7fffffu);  // [1, 2)
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

// A double uniform in [0, 1) from 52 random mantissa bits.
inline double Uint64ToDouble(uint32_t hi, uint32_t lo) {
  const uint64_t bits =
      0x3ff0000000000000ull | ((uint64_t{hi} << 32 | lo) & 0x000fffffffffffffull);  // [1, 2)
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

// Distributions fill groups of kResultsPerGroup values, each group drawing on
// its own kBlocksPerGroup blocks of the stream, so where a group's values
// come from does not depend on how the output is split between threads.

template <typename T>
struct UniformDistribution;  // [0, 1)

template <>
struct UniformDistribution<float> {
  static constexpr int kResultsPerGroup = 4;
  static constexpr int kBlocksPerGroup = 1;
  static void Generate(PhiloxRandom& gen, float* out) {
    const PhiloxRandom::Block b = gen();
    for (int i = 0; i < 4; ++i) out[i] = Uint32ToFloat(b[i]);
  }
};

template <>
struct UniformDistribution<double> {
  static constexpr int kResultsPerGroup = 2;
  static constexpr int kBlocksPerGroup = 1;
  static void Generate(PhiloxRandom& gen, double* out) {
    const PhiloxRandom::Block b = gen();
    out[0] = Uint64ToDouble(b[0], b[1]);
    out[1] = Uint64ToDouble(b[2], b[3]);
  }
};

// Box-Muller: two uniforms in [0, 1) to two independent standard normals.
template <typename T>
void BoxMuller(T u1, T u2, T* out) {
  constexpr T kTwoPi = static_cast<T>(6.283185307179586);
  constexpr T kEpsilon = static_cast<T>(1e-7);
  if (u1 < kEpsilon) u1 = kEpsilon;  // log(0) is -inf
  const T radius = std::sqrt(T(-2) * std::log(u1));
  const T theta = kTwoPi * u2;
  out[0] = radius * std::sin(theta);
  out[1] = radius * std::cos(theta);
}

template <typename T>
struct NormalDistribution;  // mean 0, stddev 1

template <>
struct NormalDistribution<float> {
  static constexpr int kResultsPerGroup = 4;
  static constexpr int kBlocksPerGroup = 1;
  static void Generate(PhiloxRandom& gen, float* out) {
    const PhiloxRandom::Block b = gen();
    BoxMuller(Uint32ToFloat(b[0]), Uint32ToFloat(b[1]), out);
    BoxMuller(Uint32ToFloat(b[2]), Uint32ToFloat(b[3]), out + 2);
  }
};

template <>
struct NormalDistribution<double> {
  static constexpr int kResultsPerGroup = 2;
  static constexpr int kBlocksPerGroup = 1;
  static void Generate(PhiloxRandom& gen, double* out) {
    const PhiloxRandom::Block b = gen();
    BoxMuller(Uint64ToDouble(b[0], b[1]), Uint64ToDouble(b[2], b[3]), out);
  }
};

// Standard normals, redrawn until they fall within 2 stddev of the mean.
template <typename T>
struct TruncatedNormalDistribution {
  static constexpr int kResultsPerGroup = NormalDistribution<T>::kResultsPerGroup;
  // A normal is kept with p = 0.954, so a group needs ~1.05 blocks on average;
  // 16 blocks run out with probability ~1e-60. Were it to happen, the group
  // reads on into the next group's blocks: still deterministic, only correlated.
  static constexpr int kBlocksPerGroup = 16;
  static void Generate(PhiloxRandom& gen, T* out) {
    int filled = 0;
    while (filled < kResultsPerGroup) {
      T normals[kResultsPerGroup];
      NormalDistribution<T>::Generate(gen, normals);
      for (int i = 0; i < kResultsPerGroup && filled < kResultsPerGroup; ++i) {
        if (std::abs(normals[i]) < T(2)) out[filled++] = normals[i];
      }
    }
  }
};

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_RANDOM_PHILOX_RANDOM_H_
