#include "core/util/tfrecord.h"

#include <string>
#include <vector>

#include "core/platform/status_testutil.h"
#include "core/util/crc32c.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

TEST(TfRecordTest, FramesLengthDataAndMaskedCrcs) {
  std::string file;
  AppendRecord("abc", &file);
  ASSERT_EQ(file.size(), kRecordOverhead + 3);
  EXPECT_EQ(file.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  const uint32_t length_crc = crc32c::Mask(crc32c::Value(file.data(), 8));
  EXPECT_EQ(static_cast<unsigned char>(file[8]), length_crc & 0xff);
  EXPECT_EQ(static_cast<unsigned char>(file[11]), length_crc >> 24);
  EXPECT_EQ(file.substr(12, 3), "abc");
  const uint32_t data_crc = crc32c::Mask(crc32c::Value("abc", 3));
  EXPECT_EQ(static_cast<unsigned char>(file[15]), data_crc & 0xff);
  EXPECT_EQ(static_cast<unsigned char>(file[18]), data_crc >> 24);
}

TEST(TfRecordTest, ParsesWhatItWrote) {
  std::string file;
  const std::vector<std::string> records = {"first", "", std::string(1000, 'x'),
                                            std::string("\0bin\xff", 5)};
  for (const std::string& r : records) AppendRecord(r, &file);
  absl::StatusOr<std::vector<std::string>> parsed = ParseRecords(file);
  ASSERT_OK(parsed.status());
  EXPECT_EQ(*parsed, records);
  parsed = ParseRecords("");
  ASSERT_OK(parsed.status());
  EXPECT_TRUE(parsed->empty());
}

TEST(TfRecordTest, CorruptionIsDataLossNamingTheRecord) {
  std::string file;
  AppendRecord("one", &file);
  const size_t second = file.size();
  AppendRecord("two", &file);

  std::string bad_data = file;
  bad_data[second + 12] ^= 1;
  EXPECT_STATUS(ParseRecords(bad_data).status(), kDataLoss,
                "record 1 at byte 19: the data's CRC does not match");

  std::string bad_length = file;
  bad_length[second] ^= 1;
  EXPECT_STATUS(ParseRecords(bad_length).status(), kDataLoss,
                "record 1 at byte 19: the length's CRC does not match");

  EXPECT_STATUS(ParseRecords(file.substr(0, file.size() - 1)).status(), kDataLoss,
                "record 1 at byte 19: truncated (3 bytes of data announced");
  EXPECT_STATUS(ParseRecords(file.substr(0, second + 5)).status(), kDataLoss,
                "record 1 at byte 19: truncated header (5 of 12 bytes)");
}

}  // namespace
}  // namespace tensorgrid
