// The checkpoint format: round trips, corruption and truncation detection,
// and crashes at every point of a save (death tests and a real SIGKILL).
#include "core/util/checkpoint_format.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "core/platform/file.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace checkpoint {
namespace {

std::string NewTestDir() {
  const char* root = std::getenv("TEST_TMPDIR");
  std::string templ = std::string(root != nullptr ? root : "/tmp") + "/ckptXXXXXX";
  TG_CHECK(::mkdtemp(templ.data()) != nullptr);
  return templ;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  while (struct dirent* e = d != nullptr ? ::readdir(d) : nullptr) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  if (d != nullptr) ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string Basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }

int64_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

void FlipByte(const std::string& path, int64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekg(offset);
  char c;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x5a));
}

void WriteRaw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string ReadRaw(const std::string& path) {
  auto s = ReadFileToString(path);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : "";
}

absl::Status WriteCheckpoint(const std::string& prefix,
                             const std::vector<std::pair<std::string, Tensor>>& tensors) {
  TG_ASSIGN_OR_RETURN(auto writer, CheckpointWriter::Create(prefix));
  for (const auto& [name, t] : tensors) TG_RETURN_IF_ERROR(writer->Add(name, t));
  return writer->Finish();
}

// A checkpoint of two float tensors, "a" = {v, v, v} and "b" = {2v, 2v}.
absl::Status WriteSimple(const std::string& prefix, float v) {
  return WriteCheckpoint(prefix, {{"a", Tensor::FromVector<float>({v, v, v}, {3})},
                                  {"b", Tensor::FromVector<float>({2 * v, 2 * v}, {2})}});
}

// The value of "a" in the checkpoint, checking "b" agrees (no mixed saves).
float ReadSimple(const std::string& prefix) {
  auto reader = CheckpointReader::Open(prefix);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return -1;
  auto a = (*reader)->Read("a");
  auto b = (*reader)->Read("b");
  EXPECT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(b.ok()) << b.status();
  if (!a.ok() || !b.ok()) return -1;
  const float v = a->data<float>()[0];
  ExpectTensorEqual<float>(*a, {v, v, v}, TensorShape({3}));
  ExpectTensorEqual<float>(*b, {2 * v, 2 * v}, TensorShape({2}));
  return v;
}

TEST(CheckpointFormatTest, RoundTripsEveryDtypeAndShape) {
  const std::string prefix = NewTestDir() + "/sub/dir/model";  // directories are created
  Tensor strings(DT_STRING, TensorShape({2, 2}));
  strings.data<std::string>()[0] = "";
  strings.data<std::string>()[1] = "hello";
  strings.data<std::string>()[2] = std::string("\0binary\xff", 8);
  strings.data<std::string>()[3] = std::string(3 << 20, 'x');  // spans write buffers
  std::vector<std::pair<std::string, Tensor>> tensors = {
      {"f32", Tensor::FromVector<float>({1.5f, -2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3})},
      {"f64", Tensor::FromVector<double>({1e300, -0.5}, {2})},
      {"i32", Tensor::Scalar<int32_t>(-7)},
      {"i64", Tensor::FromVector<int64_t>({int64_t{1} << 40}, {1, 1, 1})},
      {"u8", Tensor::FromVector<uint8_t>({0, 255}, {2})},
      {"i8", Tensor::FromVector<int8_t>({-128, 127}, {2})},
      {"i16", Tensor::FromVector<int16_t>({-300}, {1})},
      {"u16", Tensor::FromVector<uint16_t>({60000}, {1})},
      {"u32", Tensor::FromVector<uint32_t>({4000000000u}, {1})},
      {"u64", Tensor::FromVector<uint64_t>({~uint64_t{0}}, {1})},
      {"bool", Tensor::FromVector<bool>({true, false, true}, {3})},
      {"half", Tensor::FromVector<half>({half(1.5f)}, {1})},
      {"bf16", Tensor::FromVector<bfloat16>({bfloat16(-2.f)}, {1})},
      {"empty", Tensor(DT_FLOAT, TensorShape({0, 4}))},
      {"strings", strings},
      {"scope/with/slashes", Tensor::Scalar<std::string>("s")},
  };
  ASSERT_OK(WriteCheckpoint(prefix, tensors));
  auto reader = CheckpointReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_EQ((*reader)->entries().size(), tensors.size());
  for (const auto& [name, want] : tensors) {
    auto got = (*reader)->Read(name);
    ASSERT_TRUE(got.ok()) << name << ": " << got.status();
    EXPECT_EQ(got->DebugString(100), want.DebugString(100)) << name;
  }
  auto s = (*reader)->Read("strings");
  ASSERT_TRUE(s.ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(s->data<std::string>()[i], strings.data<std::string>()[i]);
}

TEST(CheckpointFormatTest, IndexListsEntriesSortedWithDtypeShapeAndPlace) {
  const std::string prefix = NewTestDir() + "/model";
  ASSERT_OK(WriteCheckpoint(
      prefix, {{"z", Tensor::Scalar<int64_t>(1)}, {"a", Tensor(DT_FLOAT, TensorShape({2, 3}))}}));
  auto reader = CheckpointReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const auto& entries = (*reader)->entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "a");
  EXPECT_EQ(entries[0].dtype, DT_FLOAT);
  EXPECT_EQ(entries[0].shape, TensorShape({2, 3}));
  EXPECT_EQ(entries[0].size, 24u);
  EXPECT_EQ(entries[1].name, "z");
  EXPECT_EQ(entries[1].offset, 24u);  // right after the data header; "z" was added first
  EXPECT_EQ(entries[0].offset, 32u);
  EXPECT_EQ((*reader)->Find("nope"), nullptr);
  EXPECT_TRUE(absl::StartsWith(Basename((*reader)->data_path()), "model.data-"));
}

TEST(CheckpointFormatTest, BoolBytesReadBackAsZeroOrOne) {
  // A file may hold any byte where a bool is stored; a bool read is 0 or 1.
  const std::string prefix = NewTestDir() + "/model";
  Tensor flags(DT_BOOL, TensorShape({2}));
  static_cast<uint8_t*>(flags.raw_data())[0] = 9;
  static_cast<uint8_t*>(flags.raw_data())[1] = 0;
  auto writer = CheckpointWriter::Create(prefix);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_OK((*writer)->Add("flags", flags));
  ASSERT_OK((*writer)->Finish());
  auto reader = CheckpointReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto read = (*reader)->Read("flags");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(static_cast<const uint8_t*>(read->raw_data())[0], 1);
  EXPECT_EQ(static_cast<const uint8_t*>(read->raw_data())[1], 0);
}

TEST(CheckpointFormatTest, MissingCheckpointAndTensorAreNotFound) {
  const std::string prefix = NewTestDir() + "/model";
  EXPECT_FALSE(CheckpointExists(prefix));
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kNotFound, prefix + ".index");
  ASSERT_OK(WriteSimple(prefix, 1));
  EXPECT_TRUE(CheckpointExists(prefix));
  auto reader = CheckpointReader::Open(prefix);
  ASSERT_TRUE(reader.ok());
  EXPECT_STATUS((*reader)->Read("c").status(), kNotFound,
                "tensor 'c' not found in checkpoint '" + prefix);
}

TEST(CheckpointFormatTest, WriterRejectsBadNamesAndUnsaveableTensors) {
  auto writer = CheckpointWriter::Create(NewTestDir() + "/model");
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_OK((*writer)->Add("a", Tensor::Scalar<float>(1)));
  EXPECT_STATUS((*writer)->Add("a", Tensor::Scalar<float>(2)), kInvalidArgument,
                "'a' appears twice");
  EXPECT_STATUS((*writer)->Add("", Tensor::Scalar<float>(2)), kInvalidArgument, "non-empty name");
  EXPECT_STATUS((*writer)->Add("h", Tensor::Scalar<ResourceHandle>(ResourceHandle())),
                kInvalidArgument, "'h' of type resource cannot be saved");
  ASSERT_OK((*writer)->Finish());
  EXPECT_STATUS((*writer)->Finish(), kFailedPrecondition, "already finished");
  EXPECT_STATUS(CheckpointWriter::Create(NewTestDir() + "/").status(), kInvalidArgument,
                "must name a file");
}

TEST(CheckpointFormatTest, FlippedDataByteIsDataLossNamingFileAndTensor) {
  const std::string prefix = NewTestDir() + "/model";
  ASSERT_OK(WriteSimple(prefix, 1));
  std::string data_path;
  uint64_t b_offset = 0;
  {
    auto reader = CheckpointReader::Open(prefix);
    ASSERT_TRUE(reader.ok());
    data_path = (*reader)->data_path();
    b_offset = (*reader)->Find("b")->offset;
  }
  FlipByte(data_path, static_cast<int64_t>(b_offset) + 5);
  auto reader = CheckpointReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();  // the damage is inside "b" only
  EXPECT_TRUE((*reader)->Read("a").ok());
  absl::Status s = (*reader)->Read("b").status();
  EXPECT_STATUS(s, kDataLoss, "tensor 'b' in checkpoint data file '" + data_path + "'");
  EXPECT_STATUS(s, kDataLoss, "checksum mismatch");
}

TEST(CheckpointFormatTest, TruncatedDataFileIsDataLossNamingFileAndTensor) {
  const std::string prefix = NewTestDir() + "/model";
  ASSERT_OK(WriteSimple(prefix, 1));
  std::string data_path = (*CheckpointReader::Open(prefix))->data_path();
  ASSERT_EQ(::truncate(data_path.c_str(), FileSize(data_path) - 3), 0);
  absl::Status s = CheckpointReader::Open(prefix).status();
  EXPECT_STATUS(s, kDataLoss, "checkpoint data file '" + data_path + "'");
  EXPECT_STATUS(s, kDataLoss, "truncated");
  EXPECT_STATUS(s, kDataLoss, "tensor 'b' is cut off");
  ASSERT_EQ(::truncate(data_path.c_str(), 10), 0);  // into the header
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss, "bad header");
  ASSERT_EQ(::unlink(data_path.c_str()), 0);
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss, "is missing");
}

TEST(CheckpointFormatTest, EveryFlippedOrTruncatedIndexByteIsDataLoss) {
  const std::string prefix = NewTestDir() + "/model";
  ASSERT_OK(WriteSimple(prefix, 1));
  const std::string index_path = IndexPath(prefix);
  const std::string good = ReadRaw(index_path);
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x01;
    WriteRaw(index_path, bad);
    EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss,
                  "checkpoint index '" + index_path + "' is corrupted");
    WriteRaw(index_path, good.substr(0, i));
    EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss,
                  "checkpoint index '" + index_path + "' is corrupted");
  }
  WriteRaw(index_path, good);
  EXPECT_EQ(ReadSimple(prefix), 1);
}

TEST(CheckpointFormatTest, GarbageIndexIsDataLoss) {
  const std::string prefix = NewTestDir() + "/model";
  const std::string index_path = IndexPath(prefix);
  WriteRaw(index_path, "model_checkpoint_path: \"not an index at all, just some text\"\n");
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss, "bad magic");
  std::string garbage = "TGCKPIDX";
  for (int i = 0; i < 200; ++i) garbage.push_back(static_cast<char>(i * 37));
  WriteRaw(index_path, garbage);
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss, "checksum mismatch");
  WriteRaw(index_path, "");
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss, "0 bytes");
}

TEST(CheckpointFormatTest, DataFileOfAnotherSaveIsDataLoss) {
  const std::string prefix = NewTestDir() + "/model";
  ASSERT_OK(WriteSimple(prefix, 1));
  const std::string old_index = ReadRaw(IndexPath(prefix));
  const std::string old_data = (*CheckpointReader::Open(prefix))->data_path();
  ASSERT_OK(WriteSimple(prefix, 2));
  const std::string new_data = (*CheckpointReader::Open(prefix))->data_path();
  ASSERT_NE(old_data, new_data);
  EXPECT_EQ(FileSize(old_data), -1);  // the overwritten checkpoint's data is gone
  // The old index with the new data file under the old name: the ids disagree.
  WriteRaw(IndexPath(prefix), old_index);
  WriteRaw(old_data, ReadRaw(new_data));
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss,
                "'" + old_data + "' has a bad header: it does not belong to its index");
}

TEST(CheckpointFormatTest, OverwriteReplacesAndLeavesOneDataFile) {
  const std::string dir = NewTestDir();
  ASSERT_OK(WriteSimple(dir + "/model", 1));
  ASSERT_OK(WriteSimple(dir + "/model-1", 5));  // a prefix extending another is separate
  ASSERT_OK(WriteSimple(dir + "/model", 2));
  EXPECT_EQ(ReadSimple(dir + "/model"), 2);
  EXPECT_EQ(ReadSimple(dir + "/model-1"), 5);
  EXPECT_EQ(ListDir(dir).size(), 4u);  // two indexes, two data files
  ASSERT_OK(DeleteCheckpoint(dir + "/model"));
  EXPECT_FALSE(CheckpointExists(dir + "/model"));
  EXPECT_EQ(ReadSimple(dir + "/model-1"), 5);
  EXPECT_EQ(ListDir(dir).size(), 2u);
  ASSERT_OK(DeleteCheckpoint(dir + "/never-written"));
}

TEST(CheckpointFormatTest, AbandonedWriterKeepsThePreviousCheckpoint) {
  const std::string dir = NewTestDir();
  ASSERT_OK(WriteSimple(dir + "/model", 1));
  {
    auto writer = CheckpointWriter::Create(dir + "/model");
    ASSERT_TRUE(writer.ok());
    ASSERT_OK((*writer)->Add("a", Tensor::FromVector<float>({9, 9, 9}, {3})));
  }
  EXPECT_EQ(ReadSimple(dir + "/model"), 1);
  EXPECT_EQ(ListDir(dir).size(), 2u);
}

TEST(CheckpointFormatTest, WriteFileAtomicallyReplacesTheWholeFile) {
  const std::string dir = NewTestDir();
  ASSERT_OK(WriteFileAtomically(dir + "/checkpoint", "first version, long\n"));
  ASSERT_OK(WriteFileAtomically(dir + "/checkpoint", "second\n"));
  EXPECT_EQ(ReadRaw(dir + "/checkpoint"), "second\n");
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"checkpoint"});
  EXPECT_STATUS(ReadFileToString(dir + "/nope").status(), kNotFound, dir + "/nope");
}

// A process killed at `point` of the second save of a prefix.
void SaveAndDieAt(const std::string& prefix, SavePoint point) {
  SetSaveHookForTesting([point](SavePoint p, const std::string&) {
    if (p == point) ::raise(SIGKILL);
  });
  absl::Status s = WriteSimple(prefix, 2);
  std::fprintf(stderr, "save returned %s without reaching the kill point\n", s.ToString().c_str());
  std::exit(0);
}

TEST(CheckpointFormatDeathTest, CrashAtAnyPointLeavesACompleteCheckpoint) {
  const std::vector<std::pair<SavePoint, float>> cases = {
      {SavePoint::kDataFilePartlyWritten, 1},  // old checkpoint intact
      {SavePoint::kDataFileWritten, 1},
      {SavePoint::kIndexTempWritten, 1},
      {SavePoint::kIndexRenamed, 2},  // committed: the new one, whole
  };
  for (const auto& [point, want] : cases) {
    const std::string dir = NewTestDir();
    ASSERT_OK(WriteSimple(dir + "/model", 1));
    EXPECT_EXIT(SaveAndDieAt(dir + "/model", point), ::testing::KilledBySignal(SIGKILL), "");
    EXPECT_EQ(ReadSimple(dir + "/model"), want) << static_cast<int>(point);
    // The next save removes whatever the crash left behind.
    ASSERT_OK(WriteSimple(dir + "/model", 3));
    EXPECT_EQ(ReadSimple(dir + "/model"), 3);
    EXPECT_EQ(ListDir(dir).size(), 2u) << static_cast<int>(point);
  }
}

// A real kill from outside, at whatever moment it lands, while a child
// process overwrites one prefix again and again with a large tensor: the
// checkpoint is always one complete save.
TEST(CheckpointFormatDeathTest, SigkillDuringLargeSavesNeverTearsTheCheckpoint) {
  const std::string prefix = NewTestDir() + "/model";
  constexpr int64_t kElements = 4 << 20;  // 16 MiB
  auto save = [&](float v) {
    Tensor big(DT_FLOAT, TensorShape({kElements}));
    std::fill_n(big.data<float>(), kElements, v);
    return WriteCheckpoint(prefix, {{"big", big}, {"v", Tensor::Scalar<float>(v)}});
  };
  ASSERT_OK(save(0));
  for (int delay_ms : {5, 40, 150}) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (int i = 1; i < 1000; ++i) save(static_cast<float>(i)).IgnoreError();
      ::_exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    auto reader = CheckpointReader::Open(prefix);
    ASSERT_TRUE(reader.ok()) << reader.status();
    auto v = (*reader)->Read("v");
    auto big = (*reader)->Read("big");
    ASSERT_TRUE(v.ok() && big.ok()) << v.status() << big.status();
    const float want = v->scalar<float>();
    std::printf("killed after %d ms: the checkpoint holds save #%g\n", delay_ms, want);
    const float* p = big->data<float>();
    EXPECT_TRUE(std::all_of(p, p + kElements, [want](float x) { return x == want; }))
        << "torn checkpoint after a kill at " << delay_ms << " ms";
  }
}

}  // namespace
}  // namespace checkpoint
}  // namespace tensorgrid
