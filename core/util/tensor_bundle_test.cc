// Tensor bundles: round trips, TensorFlow's own files and layout, slices,
// corruption and truncation detection, legacy checkpoints, merging, and
// crashes at every point of a save (death tests and a real SIGKILL).
#include "core/util/tensor_bundle.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "core/platform/file.h"
#include "core/platform/test_dir.h"
#include "core/util/crc32c.h"
#include "leveldb/env.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace checkpoint {
namespace {

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

TEST(TensorBundleTest, RoundTripsEveryDtypeAndShape) {
  const std::string prefix = NewTestDir("ckpt") + "/sub/dir/model";  // directories are created
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

// A variable that another worker updates while it is saved (asynchronous
// training): the checkpoint holds some version of each element, and its
// checksum always matches what was written.
TEST(TensorBundleTest, ATensorChangingWhileItIsSavedStillReadsBackWhole) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
  Tensor changing(DT_FLOAT, TensorShape({1 << 22}));  // 16 MiB
  float* values = changing.data<float>();
  for (int64_t i = 0; i < changing.NumElements(); ++i) values[i] = 0;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (float v = 1; !stop.load(std::memory_order_relaxed); v += 1) {
      for (int64_t i = 0; i < changing.NumElements(); i += 1024) {
        reinterpret_cast<std::atomic<float>*>(values + i)->store(v, std::memory_order_relaxed);
      }
    }
  });
  absl::Status saved = absl::OkStatus();
  for (int round = 0; round < 5 && saved.ok(); ++round) {
    saved = WriteCheckpoint(prefix, {{"v", changing}});
    if (!saved.ok()) break;
    auto reader = CheckpointReader::Open(prefix);
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_OK((*reader)->Read("v").status());
  }
  stop.store(true);
  writer.join();
  EXPECT_OK(saved);
}

TEST(TensorBundleTest, IndexListsEntriesSortedWithDtypeShapeAndPlace) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
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
  EXPECT_EQ(entries[1].offset, 0u);  // "z" was added first
  EXPECT_EQ(entries[0].offset, 8u);
  EXPECT_EQ(entries[0].shard_id, 0);
  EXPECT_EQ((*reader)->Find("nope"), nullptr);
  EXPECT_EQ((*reader)->num_shards(), 1);
  EXPECT_EQ(Basename((*reader)->data_path()), "model.data-00000-of-00001");
}

TEST(TensorBundleTest, BoolBytesReadBackAsZeroOrOne) {
  // A file may hold any byte where a bool is stored; a bool read is 0 or 1.
  const std::string prefix = NewTestDir("ckpt") + "/model";
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

TEST(TensorBundleTest, MissingCheckpointAndTensorAreNotFound) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
  EXPECT_FALSE(CheckpointExists(prefix));
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kNotFound, prefix + ".index");
  ASSERT_OK(WriteSimple(prefix, 1));
  EXPECT_TRUE(CheckpointExists(prefix));
  auto reader = CheckpointReader::Open(prefix);
  ASSERT_TRUE(reader.ok());
  EXPECT_STATUS((*reader)->Read("c").status(), kNotFound,
                "tensor 'c' not found in checkpoint '" + prefix);
}

TEST(TensorBundleTest, WriterRejectsBadNamesAndUnsaveableTensors) {
  auto writer = CheckpointWriter::Create(NewTestDir("ckpt") + "/model");
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_OK((*writer)->Add("a", Tensor::Scalar<float>(1)));
  EXPECT_STATUS((*writer)->Add("a", Tensor::Scalar<float>(2)), kInvalidArgument,
                "'a' appears twice");
  EXPECT_STATUS((*writer)->Add("", Tensor::Scalar<float>(2)), kInvalidArgument, "non-empty name");
  EXPECT_STATUS((*writer)->Add("h", Tensor::Scalar<ResourceHandle>(ResourceHandle())),
                kInvalidArgument, "'h' of type resource cannot be saved");
  ASSERT_OK((*writer)->Finish());
  EXPECT_STATUS((*writer)->Finish(), kFailedPrecondition, "already finished");
  EXPECT_STATUS(CheckpointWriter::Create(NewTestDir("ckpt") + "/").status(), kInvalidArgument,
                "must name a file");
}

TEST(TensorBundleTest, FlippedDataByteIsDataLossNamingFileAndTensor) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
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

TEST(TensorBundleTest, TruncatedDataFileIsDataLossNamingFileAndTensor) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
  ASSERT_OK(WriteSimple(prefix, 1));
  std::string data_path = (*CheckpointReader::Open(prefix))->data_path();
  ASSERT_EQ(::truncate(data_path.c_str(), FileSize(data_path) - 3), 0);
  absl::Status s = CheckpointReader::Open(prefix).status();
  EXPECT_STATUS(s, kDataLoss, "checkpoint data file '" + data_path + "'");
  EXPECT_STATUS(s, kDataLoss, "truncated");
  EXPECT_STATUS(s, kDataLoss, "tensor 'b' ends at byte 20");
  ASSERT_EQ(::truncate(data_path.c_str(), 0), 0);
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss, "tensor 'a' ends at byte 12");
  ASSERT_EQ(::unlink(data_path.c_str()), 0);
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss,
                "data file '" + data_path + "' named by its index is missing");
}

TEST(TensorBundleTest, EveryFlippedOrTruncatedIndexByteIsDataLoss) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
  ASSERT_OK(WriteSimple(prefix, 1));
  const std::string index_path = IndexPath(prefix);
  const std::string good = ReadRaw(index_path);
  int detected = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x01;
    WriteRaw(index_path, bad);
    // LevelDB's block CRCs catch a flip in the data and index blocks; the
    // (empty) metaindex block, its handle and the footer's padding are never
    // read without a filter policy, so a flip there changes nothing read.
    absl::Status s = CheckpointReader::Open(prefix).status();
    if (s.ok()) {
      EXPECT_EQ(ReadSimple(prefix), 1) << "flip at byte " << i;
    } else {
      ++detected;
      EXPECT_STATUS(s, kDataLoss, "checkpoint index '" + index_path + "' is corrupted");
    }
    WriteRaw(index_path, good.substr(0, i));
    EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss,
                  "checkpoint index '" + index_path + "' is corrupted");
  }
  EXPECT_GE(detected, static_cast<int>(good.size()) - 60);  // 51 of 142 bytes unread
  WriteRaw(index_path, good);
  EXPECT_EQ(ReadSimple(prefix), 1);
}

TEST(TensorBundleTest, GarbageIndexIsDataLoss) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
  const std::string index_path = IndexPath(prefix);
  WriteRaw(index_path, "model_checkpoint_path: \"not an index at all, just some text\"\n");
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss,
                "checkpoint index '" + index_path + "' is corrupted");
  std::string garbage = "TGCKPIDX";  // the legacy format's magic
  for (int i = 0; i < 200; ++i) garbage.push_back(static_cast<char>(i * 37));
  WriteRaw(index_path, garbage);
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss, "checksum mismatch");
  WriteRaw(index_path, "");
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss,
                "checkpoint index '" + index_path + "' is corrupted");
}

TEST(TensorBundleTest, DataFileOfAnotherSaveIsDataLoss) {
  const std::string dir = NewTestDir("ckpt");
  ASSERT_OK(WriteSimple(dir + "/model", 1));
  ASSERT_OK(WriteSimple(dir + "/other", 2));
  const std::string data_path = DataPath(dir + "/model", 0, 1);
  WriteRaw(data_path, ReadRaw(DataPath(dir + "/other", 0, 1)));  // same size, other bytes
  auto reader = CheckpointReader::Open(dir + "/model");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_STATUS((*reader)->Read("a").status(), kDataLoss,
                "tensor 'a' in checkpoint data file '" + data_path + "' is corrupted");
}

TEST(TensorBundleTest, OverwriteReplacesAndLeavesOneDataFile) {
  const std::string dir = NewTestDir("ckpt");
  ASSERT_OK(WriteSimple(dir + "/model", 1));
  ASSERT_OK(WriteSimple(dir + "/model-1", 5));  // a prefix extending another is separate
  ASSERT_OK(WriteSimple(dir + "/model", 2));
  EXPECT_EQ(ReadSimple(dir + "/model"), 2);
  EXPECT_EQ(ReadSimple(dir + "/model-1"), 5);
  // The overwrite alternated to two shards; the one-shard file is gone.
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{
                              "model-1.data-00000-of-00001", "model-1.index",
                              "model.data-00000-of-00002", "model.data-00001-of-00002",
                              "model.index"}));
  ASSERT_OK(WriteSimple(dir + "/model", 3));  // and back to one
  EXPECT_EQ(ReadSimple(dir + "/model"), 3);
  EXPECT_EQ(ListDir(dir).size(), 4u);
  EXPECT_EQ(FileSize(DataPath(dir + "/model", 0, 1)), 20);
  ASSERT_OK(DeleteCheckpoint(dir + "/model"));
  EXPECT_FALSE(CheckpointExists(dir + "/model"));
  EXPECT_EQ(ReadSimple(dir + "/model-1"), 5);
  EXPECT_EQ(ListDir(dir).size(), 2u);
  ASSERT_OK(DeleteCheckpoint(dir + "/never-written"));
}

TEST(TensorBundleTest, AbandonedWriterKeepsThePreviousCheckpoint) {
  const std::string dir = NewTestDir("ckpt");
  ASSERT_OK(WriteSimple(dir + "/model", 1));
  {
    auto writer = CheckpointWriter::Create(dir + "/model");
    ASSERT_TRUE(writer.ok());
    ASSERT_OK((*writer)->Add("a", Tensor::FromVector<float>({9, 9, 9}, {3})));
  }
  EXPECT_EQ(ReadSimple(dir + "/model"), 1);
  EXPECT_EQ(ListDir(dir).size(), 2u);
}

TEST(TensorBundleTest, WriteFileAtomicallyReplacesTheWholeFile) {
  const std::string dir = NewTestDir("ckpt");
  ASSERT_OK(WriteFileAtomically(dir + "/checkpoint", "first version, long\n"));
  ASSERT_OK(WriteFileAtomically(dir + "/checkpoint", "second\n"));
  EXPECT_EQ(ReadRaw(dir + "/checkpoint"), "second\n");
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"checkpoint"});
  EXPECT_STATUS(ReadFileToString(dir + "/nope").status(), kNotFound, dir + "/nope");
}

// ---- TensorFlow's files and layout

constexpr char kHalfPlusTwo[] =
    "tests/testdata/tf_saved_models/saved_model_half_plus_two_cpu/00000123/variables/variables";
constexpr char kCounter[] =
    "tests/testdata/tf_saved_models/saved_model_counter/00000123/variables/variables";

// Every (key, value) of an index table, read with LevelDB's own Table.
std::vector<std::pair<std::string, std::string>> TableEntries(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  leveldb::Env* env = leveldb::Env::Default();
  uint64_t size = 0;
  leveldb::RandomAccessFile* file = nullptr;
  EXPECT_TRUE(env->GetFileSize(path, &size).ok());
  EXPECT_TRUE(env->NewRandomAccessFile(path, &file).ok());
  std::unique_ptr<leveldb::RandomAccessFile> owner(file);
  leveldb::Table* table = nullptr;
  leveldb::Status s = leveldb::Table::Open(leveldb::Options(), file, size, &table);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return out;
  std::unique_ptr<leveldb::Table> table_owner(table);
  leveldb::ReadOptions read;
  read.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    out.emplace_back(it->key().ToString(), it->value().ToString());
  }
  EXPECT_TRUE(it->status().ok());
  return out;
}

TEST(TensorBundleTest, ReadsTensorFlowsHalfPlusTwoVariables) {
  auto reader = CheckpointReader::Open(kHalfPlusTwo);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_FALSE((*reader)->is_legacy());
  EXPECT_EQ((*reader)->num_shards(), 1);
  const std::vector<std::pair<std::string, float>> want = {
      {"a", 0.5f}, {"a2", 0.5f}, {"b", 2.0f}, {"c", 3.0f}, {"c2", 3.0f}};
  ASSERT_EQ((*reader)->entries().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const CheckpointReader::Entry& e = (*reader)->entries()[i];
    EXPECT_EQ(e.name, want[i].first);
    EXPECT_EQ(e.dtype, DT_FLOAT);
    EXPECT_EQ(e.shape, TensorShape({}));
    EXPECT_EQ(e.offset, 4 * i);
    EXPECT_EQ(e.size, 4u);
    auto t = (*reader)->Read(e.name);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->scalar<float>(), want[i].second) << e.name;
  }
  // The header, as TensorFlow 1.14 wrote it.
  auto entries = TableEntries(IndexPath(kHalfPlusTwo));
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries[0].first, "");
  BundleHeaderProto header;
  ASSERT_TRUE(header.ParseFromString(entries[0].second));
  EXPECT_EQ(header.num_shards(), 1);
  EXPECT_EQ(header.endianness(), BundleHeaderProto::LITTLE);
  EXPECT_EQ(header.version().producer(), 1);
  EXPECT_EQ(header.version().min_consumer(), 0);
}

TEST(TensorBundleTest, ReadsTensorFlowsCounterVariable) {
  auto reader = CheckpointReader::Open(kCounter);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_EQ((*reader)->entries().size(), 1u);
  const CheckpointReader::Entry& e = (*reader)->entries()[0];
  EXPECT_EQ(e.name, "counter");
  EXPECT_EQ(e.dtype, DT_FLOAT);
  EXPECT_EQ(e.shape, TensorShape({}));
  auto t = (*reader)->Read("counter");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->scalar<float>(), 0.0f);
}

TEST(TensorBundleTest, IndexIsALevelDbTableOfTensorFlowsEntries) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
  Tensor names = Tensor::FromVector<std::string>({"a", "bc"}, {2});
  ASSERT_OK(WriteCheckpoint(prefix, {{"w", Tensor::FromVector<float>({1.5f, -2.f}, {1, 2})},
                                     {"names", names}}));
  auto entries = TableEntries(IndexPath(prefix));
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].first, "");
  BundleHeaderProto header;
  ASSERT_TRUE(header.ParseFromString(entries[0].second));
  EXPECT_EQ(header.num_shards(), 1);
  EXPECT_EQ(header.endianness(), BundleHeaderProto::LITTLE);
  EXPECT_EQ(header.version().producer(), 1);
  const std::string data = ReadRaw(DataPath(prefix, 0, 1));

  // "names" was added second: after w's 8 bytes. TensorFlow's string layout:
  // varint lengths, the masked CRC-32C of the lengths as uint32s, the bytes.
  EXPECT_EQ(entries[1].first, "names");
  BundleEntryProto e;
  ASSERT_TRUE(e.ParseFromString(entries[1].second));
  EXPECT_EQ(e.dtype(), DT_STRING);
  ASSERT_EQ(e.shape().dim_size(), 1);
  EXPECT_EQ(e.shape().dim(0).size(), 2);
  EXPECT_EQ(e.shard_id(), 0);
  EXPECT_EQ(e.offset(), 8);
  EXPECT_EQ(e.size(), 2 + 4 + 3);
  const uint32_t lengths[2] = {1, 2};
  const uint32_t lengths_crc = crc32c::Value(lengths, sizeof(lengths));
  const uint32_t masked = crc32c::Mask(lengths_crc);
  std::string want("\x01\x02", 2);
  want.append(reinterpret_cast<const char*>(&masked), 4);
  want += "abc";
  EXPECT_EQ(data.substr(8), want);
  const uint32_t whole_crc = crc32c::Extend(crc32c::Extend(lengths_crc, &masked, 4), "abc", 3);
  EXPECT_EQ(e.crc32c(), crc32c::Mask(whole_crc));
  EXPECT_EQ(e.slices_size(), 0);

  EXPECT_EQ(entries[2].first, "w");
  ASSERT_TRUE(e.ParseFromString(entries[2].second));
  EXPECT_EQ(e.dtype(), DT_FLOAT);
  ASSERT_EQ(e.shape().dim_size(), 2);
  EXPECT_EQ(e.shape().dim(1).size(), 2);
  EXPECT_EQ(e.offset(), 0);
  EXPECT_EQ(e.size(), 8);
  EXPECT_EQ(e.crc32c(), crc32c::Mask(crc32c::Value(data.data(), 8)));
  const float w[2] = {1.5f, -2.f};
  EXPECT_EQ(data.substr(0, 8), std::string(reinterpret_cast<const char*>(w), 8));
}

// Writes an index holding `header` and one float scalar "x" (0.0f) in a
// one-shard data file.
void WriteHandMadeBundle(const std::string& prefix, const BundleHeaderProto& header) {
  leveldb::WritableFile* file = nullptr;
  ASSERT_TRUE(leveldb::Env::Default()->NewWritableFile(IndexPath(prefix), &file).ok());
  std::unique_ptr<leveldb::WritableFile> owner(file);
  leveldb::Options options;
  options.compression = leveldb::kNoCompression;
  leveldb::TableBuilder builder(options, file);
  builder.Add("", header.SerializeAsString());
  BundleEntryProto e;
  e.set_dtype(DT_FLOAT);
  e.mutable_shape();
  e.set_size(4);
  const float zero = 0;
  e.set_crc32c(crc32c::Mask(crc32c::Value(&zero, 4)));
  builder.Add("x", e.SerializeAsString());
  ASSERT_TRUE(builder.Finish().ok());
  ASSERT_TRUE(file->Close().ok());
  WriteRaw(DataPath(prefix, 0, std::max(header.num_shards(), 1)), std::string(4, '\0'));
}

TEST(TensorBundleTest, HeaderIsCheckedLikeTensorFlows) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
  BundleHeaderProto header;
  header.set_num_shards(1);
  header.mutable_version()->set_producer(1);
  WriteHandMadeBundle(prefix, header);
  ASSERT_OK(CheckpointReader::Open(prefix).status());
  header.set_num_shards(0);
  WriteHandMadeBundle(prefix, header);
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss, "0 data shards");
  header.set_num_shards(1);
  header.set_endianness(BundleHeaderProto::BIG);
  WriteHandMadeBundle(prefix, header);
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kUnimplemented, "big-endian");
  header.set_endianness(BundleHeaderProto::LITTLE);
  header.mutable_version()->set_min_consumer(2);
  WriteHandMadeBundle(prefix, header);
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kFailedPrecondition,
                "needs a reader of version 2");
  header.mutable_version()->set_min_consumer(0);
  header.mutable_version()->add_bad_consumers(1);
  WriteHandMadeBundle(prefix, header);
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kFailedPrecondition,
                "disallows readers of version 1");
}

// ---- slices

TEST(TensorBundleTest, SlicesAssembleAndWholeTensorsSlice) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
  const TensorShape full({4, 2});
  auto top = TensorSlice::Parse("0,2:-");
  auto bottom = TensorSlice::Parse("2,2:-");
  ASSERT_TRUE(top.ok() && bottom.ok());
  {
    auto writer = CheckpointWriter::Create(prefix);
    ASSERT_TRUE(writer.ok());
    ASSERT_OK((*writer)->AddSlice("p", full, *bottom, Tensor::FromVector<float>({4, 5, 6, 7}, {2, 2})));
    ASSERT_OK((*writer)->AddSlice("p", full, *top, Tensor::FromVector<float>({0, 1, 2, 3}, {2, 2})));
    EXPECT_STATUS((*writer)->AddSlice("p", full, *top, Tensor::FromVector<float>({0, 1, 2, 3}, {2, 2})),
                  kInvalidArgument, "overlaps");
    ASSERT_OK((*writer)->Add("whole", Tensor::FromVector<int32_t>({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2})));
    ASSERT_OK((*writer)->Finish());
  }
  // TensorFlow's layout: the slices listed on "p", each piece under its key.
  auto table = TableEntries(IndexPath(prefix));
  ASSERT_EQ(table.size(), 5u);
  EXPECT_EQ(table[1].first, EncodeTensorNameSlice("p", *top));  // keys start with a 0 byte
  EXPECT_EQ(table[2].first, EncodeTensorNameSlice("p", *bottom));
  EXPECT_EQ(table[3].first, "p");

  auto reader = CheckpointReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_EQ((*reader)->entries().size(), 2u);  // the pieces are no tensors of their own
  EXPECT_EQ((*reader)->Find("p")->slices.size(), 2u);
  auto p = (*reader)->Read("p");
  ASSERT_TRUE(p.ok()) << p.status();
  ExpectTensorEqual<float>(*p, {0, 1, 2, 3, 4, 5, 6, 7}, full);
  auto middle = TensorSlice::Parse("1,2:1,1");
  ASSERT_TRUE(middle.ok());
  auto across = (*reader)->Read("p", *middle);  // from both pieces
  ASSERT_TRUE(across.ok()) << across.status();
  ExpectTensorEqual<float>(*across, {3, 5}, TensorShape({2, 1}));
  auto part = (*reader)->Read("whole", *middle);  // from a whole stored tensor
  ASSERT_TRUE(part.ok()) << part.status();
  ExpectTensorEqual<int32_t>(*part, {3, 5}, TensorShape({2, 1}));
  auto too_far = TensorSlice::Parse("3,2:-");
  EXPECT_STATUS((*reader)->Read("whole", *too_far).status(), kInvalidArgument, "runs past");
}

TEST(TensorBundleTest, MissingSliceCoverageIsInvalidArgument) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
  auto top = TensorSlice::Parse("0,2:-");
  ASSERT_TRUE(top.ok());
  auto writer = CheckpointWriter::Create(prefix);
  ASSERT_TRUE(writer.ok());
  ASSERT_OK((*writer)->AddSlice("p", TensorShape({4, 2}), *top,
                                Tensor::FromVector<float>({0, 1, 2, 3}, {2, 2})));
  ASSERT_OK((*writer)->Finish());
  auto reader = CheckpointReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_STATUS((*reader)->Read("p").status(), kInvalidArgument, "do not cover");
  auto half = (*reader)->Read("p", *top);
  ASSERT_TRUE(half.ok()) << half.status();
  ExpectTensorEqual<float>(*half, {0, 1, 2, 3}, TensorShape({2, 2}));
}

// ---- shards, legacy checkpoints, merging

TEST(TensorBundleTest, MissingShardIsDataLossNamingIt) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
  ASSERT_OK(WriteSimple(prefix, 1));
  ASSERT_OK(WriteSimple(prefix, 2));  // two shards now
  const std::string shard = DataPath(prefix, 0, 2);
  ASSERT_EQ(::unlink(shard.c_str()), 0);
  EXPECT_STATUS(CheckpointReader::Open(prefix).status(), kDataLoss,
                "data file '" + shard + "' named by its index is missing");
}

TEST(TensorBundleTest, LegacyCheckpointRestoresAndIsReplacedBySaves) {
  const std::string dir = NewTestDir("ckpt");
  for (const char* name : {"model.index", "model.data-0123456789abcdef"}) {
    WriteRaw(dir + "/" + name,
             ReadRaw(std::string("core/util/testdata/legacy_checkpoint/") + name));
  }
  const std::string prefix = dir + "/model";
  auto reader = CheckpointReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->is_legacy());
  ASSERT_EQ((*reader)->entries().size(), 3u);
  auto w = (*reader)->Read("w");
  auto step = (*reader)->Read("step");
  auto names = (*reader)->Read("names");
  ASSERT_TRUE(w.ok() && step.ok() && names.ok()) << w.status() << step.status() << names.status();
  ExpectTensorEqual<float>(*w, {1.5f, -2.f}, TensorShape({2}));
  EXPECT_EQ(step->scalar<int64_t>(), 7);
  ExpectTensorEqual<std::string>(*names, {"a", "bc"}, TensorShape({2}));
  auto part = (*reader)->Read("w", *TensorSlice::Parse("1,1"));
  ASSERT_TRUE(part.ok()) << part.status();
  ExpectTensorEqual<float>(*part, {-2.f}, TensorShape({1}));
  reader->reset();
  ASSERT_OK(WriteSimple(prefix, 4));  // saves write TensorFlow's format
  EXPECT_EQ(ReadSimple(prefix), 4);
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"model.data-00000-of-00001", "model.index"}));
}

TEST(TensorBundleTest, MergeJoinsCheckpointsAndRemovesTheSources) {
  const std::string dir = NewTestDir("ckpt");
  const std::string a = dir + "/model_temp_x/part-00000-of-00002";
  const std::string b = dir + "/model_temp_x/part-00001-of-00002";
  ASSERT_OK(WriteCheckpoint(a, {{"x", Tensor::Scalar<float>(1)}}));
  ASSERT_OK(WriteCheckpoint(b, {{"y", Tensor::FromVector<std::string>({"s"}, {1})}}));
  ASSERT_OK(MergeCheckpoints({a, b}, dir + "/model", /*allow_missing_files=*/false));
  auto reader = CheckpointReader::Open(dir + "/model");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->num_shards(), 1);
  EXPECT_EQ((*reader)->Read("x")->scalar<float>(), 1);
  EXPECT_EQ((*reader)->Read("y")->data<std::string>()[0], "s");
  EXPECT_FALSE(CheckpointExists(a));
  EXPECT_TRUE(ListDir(dir + "/model_temp_x").empty());
  EXPECT_STATUS(MergeCheckpoints({a}, dir + "/model2", false), kNotFound, a + ".index");
  EXPECT_STATUS(MergeCheckpoints({a}, dir + "/model2", true), kNotFound, "none of the 1");
  ASSERT_OK(WriteCheckpoint(a, {{"x", Tensor::Scalar<float>(1)}}));
  ASSERT_OK(WriteCheckpoint(b, {{"x", Tensor::Scalar<float>(2)}}));
  EXPECT_STATUS(MergeCheckpoints({a, b}, dir + "/model3", false), kInvalidArgument,
                "'x' appears twice");
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

TEST(TensorBundleDeathTest, CrashAtAnyPointLeavesACompleteCheckpoint) {
  const std::vector<std::pair<SavePoint, float>> cases = {
      {SavePoint::kDataFilePartlyWritten, 1},  // old checkpoint intact
      {SavePoint::kDataFileWritten, 1},
      {SavePoint::kIndexTempWritten, 1},
      {SavePoint::kIndexRenamed, 2},  // committed: the new one, whole
  };
  for (const auto& [point, want] : cases) {
    const std::string dir = NewTestDir("ckpt");
    ASSERT_OK(WriteSimple(dir + "/model", 1));
    EXPECT_EXIT(SaveAndDieAt(dir + "/model", point), ::testing::KilledBySignal(SIGKILL), "");
    EXPECT_EQ(ReadSimple(dir + "/model"), want) << static_cast<int>(point);
    // The next save removes whatever the crash left behind.
    ASSERT_OK(WriteSimple(dir + "/model", 3));
    EXPECT_EQ(ReadSimple(dir + "/model"), 3);
    const int shards = (*CheckpointReader::Open(dir + "/model"))->num_shards();
    EXPECT_EQ(ListDir(dir).size(), 1u + shards) << static_cast<int>(point);
  }
}

// A real kill from outside, at whatever moment it lands, while a child
// process overwrites one prefix again and again with a large tensor: the
// checkpoint is always one complete save.
TEST(TensorBundleDeathTest, SigkillDuringLargeSavesNeverTearsTheCheckpoint) {
  const std::string prefix = NewTestDir("ckpt") + "/model";
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
