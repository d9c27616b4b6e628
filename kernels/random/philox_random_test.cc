#include "kernels/random/philox_random.h"

#include <cmath>

#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

using Block = PhiloxRandom::Block;

// Random123's known answers (tests/kat_vectors, "philox4x32 10").
TEST(PhiloxRandomTest, MatchesRandom123KnownAnswers) {
  EXPECT_EQ(PhiloxRandom(Block{0, 0, 0, 0}, {0, 0})(),
            (Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(PhiloxRandom(Block{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                         {0xffffffff, 0xffffffff})(),
            (Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(PhiloxRandom(Block{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                         {0xa4093822, 0x299f31d0})(),
            (Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(PhiloxRandomTest, SeedIsTheKeyAndSeed2TheHighCounter) {
  PhiloxRandom seeded(0x0000000200000001ull, 0x0000000400000003ull);
  PhiloxRandom spelled(Block{0, 0, 3, 4}, {1, 2});
  EXPECT_EQ(seeded(), spelled());
  EXPECT_EQ(seeded(), spelled());
}

TEST(PhiloxRandomTest, SkipMatchesDrawing) {
  PhiloxRandom drawn(42, 7), skipped(42, 7);
  for (int i = 0; i < 1000; ++i) drawn();
  skipped.Skip(1000);
  EXPECT_EQ(drawn(), skipped());
}

TEST(PhiloxRandomTest, SkipCarriesIntoTheHighHalf) {
  PhiloxRandom a(Block{0xfffffffe, 0xffffffff, 5, 0}, {9, 9});
  a.Skip(3);
  EXPECT_EQ(a(), PhiloxRandom(Block{1, 0, 6, 0}, {9, 9})());

  PhiloxRandom b(Block{0xffffffff, 0xffffffff, 0xffffffff, 0}, {1, 1});
  b();  // the counter wraps its low half and carries twice
  EXPECT_EQ(b(), PhiloxRandom(Block{0, 0, 0, 1}, {1, 1})());
}

TEST(PhiloxRandomTest, UniformConversionsCoverTheUnitInterval) {
  EXPECT_EQ(Uint32ToFloat(0), 0.0f);
  EXPECT_EQ(Uint32ToFloat(0xffffffff), 1.0f - std::ldexp(1.0f, -23));
  EXPECT_EQ(Uint64ToDouble(0, 0), 0.0);
  EXPECT_EQ(Uint64ToDouble(0xffffffff, 0xffffffff), 1.0 - std::ldexp(1.0, -52));
  EXPECT_EQ(Uint64ToDouble(0x00080000, 0), 0.5);
}

TEST(PhiloxRandomTest, BoxMuller) {
  double out[2];
  BoxMuller(0.5, 0.25, out);  // radius sqrt(2 ln 2), angle pi/2
  EXPECT_NEAR(out[0], std::sqrt(2 * std::log(2.0)), 1e-12);
  EXPECT_NEAR(out[1], 0.0, 1e-12);
  BoxMuller(0.0, 0.0, out);  // clamped away from log(0)
  EXPECT_TRUE(std::isfinite(out[0]) && std::isfinite(out[1]));
}

TEST(PhiloxRandomTest, TruncatedNormalStaysWithinTwoStddev) {
  PhiloxRandom gen(1, 1);
  float values[4];
  for (int i = 0; i < 10000; ++i) {
    TruncatedNormalDistribution<float>::Generate(gen, values);
    for (float v : values) ASSERT_LT(std::abs(v), 2.0f);
  }
}

}  // namespace
}  // namespace tensorgrid
