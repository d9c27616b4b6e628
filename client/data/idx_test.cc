#include "client/data/idx.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

void WriteGzipBytes(const std::string& path, const std::string& bytes) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr) << path;
  ASSERT_EQ(gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// An MNIST-style uint8 [2, 3] file: header then 6 bytes.
std::string SmallIdx() {
  return std::string("\x00\x00\x08\x02\x00\x00\x00\x02\x00\x00\x00\x03", 12) +
         std::string("\x01\x02\x03\x04\x05\xff", 6);
}

TEST(IdxTest, ReadsAPlainUint8File) {
  std::string path = TempPath("plain.idx");
  WriteBytes(path, SmallIdx());
  auto t = ReadIdx(path);
  ASSERT_OK(t.status());
  EXPECT_EQ(t->dtype(), DT_UINT8);
  EXPECT_EQ(t->shape(), TensorShape({2, 3}));
  EXPECT_EQ(t->SummarizeValue(6), "1 2 3 4 5 255");
}

TEST(IdxTest, ReadsAGzipFileByItsMagicNotItsName) {
  std::string path = TempPath("compressed_without_suffix");
  WriteGzipBytes(path, SmallIdx());
  auto t = ReadIdx(path);
  ASSERT_OK(t.status());
  EXPECT_EQ(t->shape(), TensorShape({2, 3}));
  EXPECT_EQ(t->SummarizeValue(6), "1 2 3 4 5 255");
}

TEST(IdxTest, MultiByteValuesAreBigEndianOnDisk) {
  Tensor t = Tensor::FromVector<int32_t>({0x01020304, -2}, {2});
  auto bytes = EncodeIdx(t);
  ASSERT_OK(bytes.status());
  EXPECT_EQ(*bytes, std::string("\x00\x00\x0c\x01\x00\x00\x00\x02"
                                "\x01\x02\x03\x04\xff\xff\xff\xfe",
                                16));
}

template <typename T>
void ExpectRoundTrip(bool gzip) {
  Tensor t(DataTypeToEnum<T>::value, TensorShape({2, 3, 2}));
  for (int i = 0; i < 12; ++i) t.data<T>()[i] = static_cast<T>(i * 7 - 20);
  std::string path =
      TempPath(std::string("roundtrip_") + DataTypeString(t.dtype()) + (gzip ? ".gz" : ""));
  ASSERT_OK(WriteIdx(path, t, gzip));
  EXPECT_EQ(static_cast<unsigned char>(ReadBytes(path)[0]), gzip ? 0x1f : 0x00);
  auto back = ReadIdx(path);
  ASSERT_OK(back.status());
  EXPECT_EQ(back->dtype(), t.dtype());
  EXPECT_EQ(back->shape(), t.shape());
  EXPECT_EQ(back->SummarizeValue(12), t.SummarizeValue(12));
}

TEST(IdxTest, EveryIdxTypeRoundTripsPlainAndGzip) {
  for (bool gzip : {false, true}) {
    ExpectRoundTrip<uint8_t>(gzip);
    ExpectRoundTrip<int8_t>(gzip);
    ExpectRoundTrip<int16_t>(gzip);
    ExpectRoundTrip<int32_t>(gzip);
    ExpectRoundTrip<float>(gzip);
    ExpectRoundTrip<double>(gzip);
  }
}

TEST(IdxTest, EncodeRejectsTypesAndScalarsIdxCannotHold) {
  EXPECT_STATUS(EncodeIdx(Tensor::FromVector<int64_t>({1}, {1})).status(), kInvalidArgument,
                "IDX cannot hold int64");
  EXPECT_STATUS(EncodeIdx(Tensor::Scalar<float>(1)).status(), kInvalidArgument, "rank >= 1");
}

TEST(IdxTest, BadMagicIsNotAnIdxFile) {
  std::string path = TempPath("bad_magic");
  WriteBytes(path, "\x89PNG\r\n\x1a\n and so on");
  EXPECT_STATUS(ReadIdx(path).status(), kInvalidArgument,
                "is not an IDX file: it starts with 89 50");
}

TEST(IdxTest, UnknownTypeCodeAndZeroRank) {
  std::string path = TempPath("bad_type");
  WriteBytes(path, std::string("\x00\x00\x0a\x01\x00\x00\x00\x01\x07", 9));
  EXPECT_STATUS(ReadIdx(path).status(), kInvalidArgument, "unknown IDX type code 0x0a");
  WriteBytes(path, std::string("\x00\x00\x08\x00", 4));
  EXPECT_STATUS(ReadIdx(path).status(), kInvalidArgument, "IDX rank 0");
}

TEST(IdxTest, TruncatedDataIsDataLossNamingExpectedAndFound) {
  std::string bytes = SmallIdx();
  bytes.resize(bytes.size() - 2);
  for (bool gzip : {false, true}) {
    std::string path = TempPath(gzip ? "truncated.gz" : "truncated");
    gzip ? WriteGzipBytes(path, bytes) : WriteBytes(path, bytes);
    absl::Status s = ReadIdx(path).status();
    EXPECT_STATUS(s, kDataLoss, path);
    EXPECT_STATUS(s, kDataLoss,
                  "truncated: shape [2,3] of uint8 needs 6 bytes of data after the 12-byte header");
    EXPECT_STATUS(s, kDataLoss, "found 4");
  }
}

TEST(IdxTest, TruncatedHeaderIsDataLoss) {
  std::string path = TempPath("short_header");
  WriteBytes(path, SmallIdx().substr(0, 6));
  EXPECT_STATUS(ReadIdx(path).status(), kDataLoss,
                "truncated IDX header: expected 8 bytes of dimensions for rank 2, found 2");
  WriteBytes(path, "");
  EXPECT_STATUS(ReadIdx(path).status(), kDataLoss, "expected 4 magic bytes, found 0");
}

TEST(IdxTest, TrailingBytesAreDataLoss) {
  std::string bytes = SmallIdx() + "xyz";
  for (bool gzip : {false, true}) {
    std::string path = TempPath(gzip ? "trailing.gz" : "trailing");
    gzip ? WriteGzipBytes(path, bytes) : WriteBytes(path, bytes);
    absl::Status s = ReadIdx(path).status();
    EXPECT_STATUS(s, kDataLoss, "needs 6 bytes of data");
    EXPECT_STATUS(s, kDataLoss, "found 9");
    EXPECT_STATUS(s, kDataLoss, "found 9 (3 trailing bytes)");
  }
}

TEST(IdxTest, DimsThatDisagreeWithTheDataAreDataLoss) {
  // The header claims [3, 3] (9 bytes) over 6 bytes of data, then [1, 3] over 6.
  std::string path = TempPath("dims_mismatch");
  std::string bytes = SmallIdx();
  bytes[7] = 3;
  WriteBytes(path, bytes);
  EXPECT_STATUS(ReadIdx(path).status(), kDataLoss,
                "truncated: shape [3,3] of uint8 needs 9 bytes of data after the 12-byte header, "
                "found 6");
  bytes[7] = 1;
  WriteBytes(path, bytes);
  EXPECT_STATUS(ReadIdx(path).status(), kDataLoss,
                "shape [1,3] of uint8 needs 3 bytes of data after the 12-byte header, found 6 "
                "(3 trailing bytes)");
}

TEST(IdxTest, HugeDimsFailWithoutAllocating) {
  std::string path = TempPath("huge_dims");
  WriteBytes(path,
             std::string("\x00\x00\x0d\x03\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x10", 16));
  absl::Status s = ReadIdx(path).status();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find(path), std::string::npos) << s;
}

TEST(IdxTest, DimsWhoseBytesOverflowAreDataLoss) {
  // float64 [687339024, 4278190080]: 2.9e18 elements, 2.3e19 bytes.
  std::string path = TempPath("overflow");
  WriteBytes(path, std::string("\x00\x00\x0e\x02\x28\xf7\xf6\x10\xff\x00\x00\x00", 12));
  EXPECT_STATUS(ReadIdx(path).status(), kDataLoss, "needs more than 2^63 bytes");
}

TEST(IdxTest, CorruptGzipStreamIsDataLoss) {
  std::string path = TempPath("corrupt.gz");
  Tensor t(DT_UINT8, TensorShape({64, 64}));
  for (int i = 0; i < 64 * 64; ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(i * 31 % 251);
  ASSERT_OK(WriteIdx(path, t, /*gzip=*/true));
  std::string bytes = ReadBytes(path);
  for (size_t i = 20; i < bytes.size() - 10; i += 3) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  WriteBytes(path, bytes);
  absl::Status s = ReadIdx(path).status();
  EXPECT_FALSE(s.ok());
  // Depending on where zlib notices, the header or the data is damaged.
  EXPECT_TRUE(s.code() == absl::StatusCode::kDataLoss ||
              s.code() == absl::StatusCode::kInvalidArgument)
      << s;
  EXPECT_NE(std::string(s.message()).find(path), std::string::npos) << s;
}

TEST(IdxTest, MissingFileIsNotFound) {
  EXPECT_STATUS(ReadIdx(TempPath("no_such_file")).status(), kNotFound, "no_such_file not found");
}

TEST(IdxTest, MissingFileUnderDatasetsNamesTheDebianPackage) {
  EXPECT_STATUS(ReadIdx("/usr/share/datasets/fashion-mnist/no-such-file").status(), kNotFound,
                "install Debian's dataset-fashion-mnist package (apt-get install "
                "dataset-fashion-mnist)");
  EXPECT_STATUS(MissingDataFile("/usr/share/datasets/mnist/x"), kNotFound,
                "apt-get install dataset-mnist");
}

TEST(IdxTest, DirectoryIsInvalidArgument) {
  std::string dir = TempPath("a_directory");
  mkdir(dir.c_str(), 0755);
  EXPECT_STATUS(ReadIdx(dir).status(), kInvalidArgument, "is a directory");
}

}  // namespace
}  // namespace tensorgrid
