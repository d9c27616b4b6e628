// CRC-32C against published check values (the catalogue's "123456789" and
// RFC 3720's iSCSI vectors), and the SSE 4.2 path against the table on every
// length and alignment, whole and in pieces.
#include "core/util/crc32c.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tensorgrid {
namespace crc32c {
namespace {

TEST(Crc32cTest, CheckValues) {
  EXPECT_EQ(Value("123456789", 9), 0xE3069283u);
  std::vector<unsigned char> zeros(32, 0), ones(32, 0xff), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<unsigned char>(i);
    down[i] = static_cast<unsigned char>(31 - i);
  }
  EXPECT_EQ(Value(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(Value(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(Value(up.data(), 32), 0x46DD794Eu);
  EXPECT_EQ(Value(down.data(), 32), 0x113FDB5Cu);
  EXPECT_EQ(Value("", 0), 0u);
}

TEST(Crc32cTest, EveryLengthAndAlignmentMatchesTheTable) {
  std::mt19937 rng(7);
  std::vector<unsigned char> data(300);
  for (auto& b : data) b = static_cast<unsigned char>(rng());
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n = 0; offset + n <= data.size(); ++n) {
      ASSERT_EQ(Value(data.data() + offset, n),
                ExtendPortableForTesting(0, data.data() + offset, n))
          << "offset " << offset << ", length " << n;
    }
  }
}

TEST(Crc32cTest, ExtendingInPiecesGivesTheWhole) {
  std::string data(1000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31 + 7);
  const uint32_t whole = Value(data.data(), data.size());
  for (size_t cut : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    EXPECT_EQ(Extend(Value(data.data(), cut), data.data() + cut, data.size() - cut), whole) << cut;
  }
}

TEST(Crc32cTest, MaskRoundTrips) {
  for (uint32_t crc : {0u, 1u, 0xE3069283u, 0xffffffffu}) {
    EXPECT_EQ(Unmask(Mask(crc)), crc);
    EXPECT_NE(Mask(crc), crc);
  }
}

}  // namespace
}  // namespace crc32c
}  // namespace tensorgrid
