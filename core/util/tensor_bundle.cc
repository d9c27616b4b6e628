// Paths, the save hook, CheckpointWriter and MergeCheckpoints of
// tensor_bundle.h; the reader is in tensor_bundle_reader.cc.
// docs/checkpoints.md has the layout and the crash-safety argument.
#include "core/util/tensor_bundle.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "core/platform/file.h"
#include "core/platform/status.h"
#include "core/util/crc32c.h"
#include "leveldb/env.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "tensor bytes are written as they lie in memory, and bundles say LITTLE");

namespace tensorgrid {
namespace checkpoint {
namespace {

constexpr size_t kWriteBufferBytes = 1 << 20;

absl::Mutex hook_mu;
SaveHook* save_hook ABSL_GUARDED_BY(hook_mu) = nullptr;

void AtSavePoint(SavePoint point, const std::string& path) {
  SaveHook hook;
  {
    absl::MutexLock lock(&hook_mu);
    if (save_hook == nullptr) return;
    hook = *save_hook;
  }
  hook(point, path);
}

bool IsSaveableType(DataType dtype) {
  return DataTypeIsSupported(dtype) && !IsRefType(dtype) && dtype != DT_RESOURCE;
}

void PutVarint64(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// The number of data shards the committed index of `prefix` names; 0 when
// there is none or it cannot be read as a tensor bundle.
int CommittedNumShards(const std::string& prefix) {
  leveldb::Env* env = leveldb::Env::Default();
  const std::string path = IndexPath(prefix);
  uint64_t size = 0;
  leveldb::RandomAccessFile* file = nullptr;
  if (!env->GetFileSize(path, &size).ok() || !env->NewRandomAccessFile(path, &file).ok()) return 0;
  std::unique_ptr<leveldb::RandomAccessFile> file_owner(file);
  leveldb::Options options;
  options.paranoid_checks = true;
  leveldb::Table* table = nullptr;
  if (!leveldb::Table::Open(options, file, size, &table).ok()) return 0;
  std::unique_ptr<leveldb::Table> table_owner(table);
  leveldb::ReadOptions read;
  read.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
  it->SeekToFirst();
  BundleHeaderProto header;
  if (!it->Valid() || !it->key().empty() ||
      !header.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
    return 0;
  }
  return header.num_shards();
}

// Whether `name` is a data file of prefix basename `base`:
// "<base>.data-DDDDD-of-DDDDD" (setting `num_shards`) or a legacy
// "<base>.data-<16 hex digits>" (num_shards 0).
bool IsDataFileName(const std::string& name, const std::string& base, int* num_shards) {
  const std::string start = base + ".data-";
  if (!absl::StartsWith(name, start)) return false;
  const std::string rest = name.substr(start.size());
  auto digits = [](absl::string_view s, absl::string_view set) {
    return !s.empty() && s.find_first_not_of(set) == absl::string_view::npos;
  };
  if (rest.size() == 14 && rest.substr(5, 4) == "-of-" && digits(rest.substr(0, 5), "0123456789") &&
      digits(rest.substr(9), "0123456789")) {
    *num_shards = std::stoi(rest.substr(9));
    return true;
  }
  if (rest.size() == 16 && digits(rest, "0123456789abcdef")) {
    *num_shards = 0;
    return true;
  }
  return false;
}

// Removes the prefix's data files except those of a bundle of
// `keep_num_shards` shards (0: all), and its temporary index files.
absl::Status RemovePrefixFiles(const std::string& prefix, int keep_num_shards) {
  const std::string dir = Dirname(prefix);
  const std::string base = Basename(prefix);
  const std::string index_temp_start = Basename(IndexPath(prefix)) + kTempMarker;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return errno == ENOENT ? absl::OkStatus() : ErrnoToStatus(errno, "listing", dir);
  }
  std::vector<std::string> doomed;
  while (struct dirent* ent = ::readdir(d)) {
    const std::string name = ent->d_name;
    int num_shards = 0;
    const bool data = IsDataFileName(name, base, &num_shards);
    if ((data && (keep_num_shards == 0 || num_shards != keep_num_shards)) ||
        absl::StartsWith(name, index_temp_start)) {
      doomed.push_back(name);
    }
  }
  ::closedir(d);
  absl::Status status;
  for (const std::string& name : doomed) {
    const std::string path = dir + "/" + name;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT && status.ok()) {
      status = ErrnoToStatus(errno, "removing", path);
    }
  }
  return status;
}

absl::Status FromLevelDb(const leveldb::Status& s, const std::string& what) {
  if (s.ok()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", s.ToString()));
}

}  // namespace

void SetSaveHookForTesting(SaveHook hook) {
  // WriteFileAtomically (core/platform/file.h) reports its own point.
  if (hook) {
    SetAtomicWriteHookForTesting(
        [hook](const std::string& temp) { hook(SavePoint::kAtomicTempWritten, temp); });
  } else {
    SetAtomicWriteHookForTesting(nullptr);
  }
  absl::MutexLock lock(&hook_mu);
  delete save_hook;
  save_hook = hook ? new SaveHook(std::move(hook)) : nullptr;
}

// ---------------------------------------------------------------- paths, files

std::string IndexPath(const std::string& prefix) { return prefix + ".index"; }

std::string DataPath(const std::string& prefix, int shard, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

bool CheckpointExists(const std::string& prefix) { return IsRegularFile(IndexPath(prefix)); }

absl::Status DeleteCheckpoint(const std::string& prefix) {
  const std::string index = IndexPath(prefix);
  if (::unlink(index.c_str()) != 0 && errno != ENOENT) {
    return ErrnoToStatus(errno, "removing", index);
  }
  return RemovePrefixFiles(prefix, 0);
}

// ---------------------------------------------------------------- writer

absl::StatusOr<std::unique_ptr<CheckpointWriter>> CheckpointWriter::Create(
    const std::string& prefix) {
  if (prefix.empty() || prefix.back() == '/') {
    return errors::InvalidArgument("checkpoint prefix '", prefix,
                                   "' must name a file (such as '/tmp/ckpt/model')");
  }
  TG_RETURN_IF_ERROR(CreateDirectories(Dirname(prefix)));
  // Never the data file names the committed index points at.
  const int num_shards = CommittedNumShards(prefix) == 1 ? 2 : 1;
  const std::string data_path = DataPath(prefix, 0, num_shards);
  const int fd = ::open(data_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoToStatus(errno, "creating checkpoint data file", data_path);
  return std::unique_ptr<CheckpointWriter>(new CheckpointWriter(prefix, num_shards, fd));
}

CheckpointWriter::CheckpointWriter(std::string prefix, int num_shards, int fd)
    : prefix_(std::move(prefix)),
      num_shards_(num_shards),
      data_path_(DataPath(prefix_, 0, num_shards)),
      fd_(fd) {}

CheckpointWriter::~CheckpointWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!finished_) {
    for (int shard = 0; shard < num_shards_; ++shard) {
      ::unlink(DataPath(prefix_, shard, num_shards_).c_str());
    }
  }
}

absl::Status CheckpointWriter::Append(const void* bytes, size_t n, uint32_t* crc) {
  // Through a copy: the checksum and the file get the same bytes even when
  // the tensor changes meanwhile (a variable that another worker's
  // asynchronous update writes while it is saved, as TensorFlow allows).
  constexpr size_t kChunk = 1 << 20;
  if (copy_.size() < std::min(n, kChunk)) copy_.resize(std::min(n, kChunk));
  const char* from = static_cast<const char*>(bytes);
  for (size_t done = 0; done < n;) {
    const size_t part = std::min(kChunk, n - done);
    std::memcpy(copy_.data(), from + done, part);
    *crc = crc32c::Extend(*crc, copy_.data(), part);
    TG_RETURN_IF_ERROR(WriteAll(fd_, copy_.data(), part, data_path_));
    done += part;
    offset_ += part;
  }
  return absl::OkStatus();
}

absl::Status CheckpointWriter::CheckWritable() const {
  if (!error_.ok()) {
    return errors::FailedPrecondition("checkpoint '", prefix_,
                                      "' failed earlier: ", error_.message());
  }
  if (finished_ || fd_ < 0) {
    return errors::FailedPrecondition("checkpoint '", prefix_, "' is already finished");
  }
  return absl::OkStatus();
}

absl::Status CheckpointWriter::Add(const std::string& name, const Tensor& tensor) {
  TG_RETURN_IF_ERROR(CheckWritable());
  if (name.empty()) return errors::InvalidArgument("a checkpoint tensor needs a non-empty name");
  if (!IsSaveableType(tensor.dtype())) {
    return errors::InvalidArgument("tensor '", name, "' of type ", DataTypeString(tensor.dtype()),
                                   " cannot be saved in a checkpoint");
  }
  if (entries_.count(name) != 0) {
    return errors::InvalidArgument("tensor name '", name, "' appears twice in checkpoint '",
                                   prefix_, "'");
  }
  BundleEntryProto e;
  e.set_dtype(tensor.dtype());
  for (int64_t d : tensor.shape().dim_sizes()) e.mutable_shape()->add_dim()->set_size(d);
  e.set_shard_id(0);
  e.set_offset(static_cast<int64_t>(offset_));
  uint32_t crc = 0;
  // A failed write leaves the data file in an unknown state: the writer is
  // done for, and its destructor removes the file.
  error_ = AppendTensor(tensor, &crc);
  TG_RETURN_IF_ERROR(error_);
  e.set_size(static_cast<int64_t>(offset_) - e.offset());
  e.set_crc32c(crc32c::Mask(crc));
  entries_.emplace(name, std::move(e));
  if (entries_.size() == 1) AtSavePoint(SavePoint::kDataFilePartlyWritten, data_path_);
  return absl::OkStatus();
}

// TensorFlow's layout: fixed-size elements as they lie in memory; strings as
// every length (varint64), a masked CRC-32C of the lengths, then every
// string's bytes. The entry's CRC covers, as TensorFlow computes it, each
// length as a little-endian uint32 (uint64 when it does not fit), the
// 4 bytes of the length checksum as written, and the string bytes.
absl::Status CheckpointWriter::AppendTensor(const Tensor& tensor, uint32_t* crc) {
  if (tensor.dtype() != DT_STRING) {
    const size_t bytes = static_cast<size_t>(tensor.NumElements()) * DataTypeSize(tensor.dtype());
    return Append(tensor.raw_data(), bytes, crc);
  }
  std::string lengths;
  uint32_t lengths_crc = 0;
  for (const std::string& s : tensor.values<std::string>()) {
    PutVarint64(&lengths, s.size());
    if (s.size() <= UINT32_MAX) {
      const uint32_t n = static_cast<uint32_t>(s.size());
      lengths_crc = crc32c::Extend(lengths_crc, &n, sizeof(n));
    } else {
      const uint64_t n = s.size();
      lengths_crc = crc32c::Extend(lengths_crc, &n, sizeof(n));
    }
  }
  uint32_t ignored = 0;
  TG_RETURN_IF_ERROR(Append(lengths.data(), lengths.size(), &ignored));
  const uint32_t masked = crc32c::Mask(lengths_crc);
  char masked_bytes[4];
  for (int i = 0; i < 4; ++i) masked_bytes[i] = static_cast<char>((masked >> (8 * i)) & 0xff);
  TG_RETURN_IF_ERROR(Append(masked_bytes, 4, &ignored));
  *crc = crc32c::Extend(lengths_crc, masked_bytes, 4);
  std::string buf;
  for (const std::string& s : tensor.values<std::string>()) {
    buf += s;
    if (buf.size() >= kWriteBufferBytes) {
      TG_RETURN_IF_ERROR(Append(buf.data(), buf.size(), crc));
      buf.clear();
    }
  }
  return Append(buf.data(), buf.size(), crc);
}

absl::Status CheckpointWriter::AddSlice(const std::string& name, const TensorShape& full_shape,
                                        const TensorSlice& slice, const Tensor& piece) {
  TG_RETURN_IF_ERROR(CheckWritable());
  const std::string what = absl::StrCat("slice '", slice.DebugString(), "' of tensor '", name, "'");
  auto slice_shape = slice.SliceShape(full_shape);
  if (!slice_shape.ok()) return errors::InvalidArgument(what, ": ", slice_shape.status().message());
  if (*slice_shape != piece.shape()) {
    return errors::InvalidArgument(what, " has shape ", slice_shape->DebugString(),
                                   ", but the tensor given has shape ",
                                   piece.shape().DebugString());
  }
  if (slice.IsFull() || *slice_shape == full_shape) return Add(name, piece);
  auto it = entries_.find(name);
  if (it != entries_.end()) {
    BundleEntryProto& full = it->second;
    if (full.slices_size() == 0) {
      return errors::InvalidArgument(what, ": the whole tensor was added already");
    }
    TensorShape shape;
    for (const auto& dim : full.shape().dim()) shape.AddDim(dim.size());
    if (full.dtype() != piece.dtype() || shape != full_shape) {
      return errors::InvalidArgument(what, " is ", DataTypeString(piece.dtype()), " of ",
                                     full_shape.DebugString(), ", earlier slices are ",
                                     DataTypeString(full.dtype()), " of ", shape.DebugString());
    }
    for (const TensorSliceProto& proto : full.slices()) {
      auto other = TensorSlice::FromProto(proto);
      if (other.ok() && other->Overlaps(slice, full_shape)) {
        return errors::InvalidArgument(what, " overlaps slice '", other->DebugString(),
                                       "' added before");
      }
    }
  }
  TG_RETURN_IF_ERROR(Add(EncodeTensorNameSlice(name, slice), piece));
  BundleEntryProto& full = entries_[name];
  full.set_dtype(piece.dtype());
  full.mutable_shape()->clear_dim();
  for (int64_t d : full_shape.dim_sizes()) full.mutable_shape()->add_dim()->set_size(d);
  slice.ToProto(full.add_slices());
  return absl::OkStatus();
}

absl::Status CheckpointWriter::WriteIndex() {
  const std::string final_path = IndexPath(prefix_);
  const std::string temp = TempPath(final_path);
  leveldb::Env* env = leveldb::Env::Default();
  leveldb::WritableFile* raw_file = nullptr;
  TG_RETURN_IF_ERROR(FromLevelDb(env->NewWritableFile(temp, &raw_file),
                                 absl::StrCat("creating checkpoint index '", temp, "'")));
  std::unique_ptr<leveldb::WritableFile> file(raw_file);
  leveldb::Options options;
  options.compression = leveldb::kNoCompression;
  leveldb::TableBuilder builder(options, file.get());
  BundleHeaderProto header;
  header.set_num_shards(num_shards_);
  header.set_endianness(BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(kTensorBundleVersion);
  builder.Add("", header.SerializeAsString());
  for (const auto& [key, entry] : entries_) builder.Add(key, entry.SerializeAsString());
  leveldb::Status s = builder.Finish();
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  absl::Status status = FromLevelDb(s, absl::StrCat("writing checkpoint index '", temp, "'"));
  if (status.ok()) {
    AtSavePoint(SavePoint::kIndexTempWritten, temp);
    status = RenameFile(temp, final_path);
  }
  if (!status.ok()) ::unlink(temp.c_str());
  return status;
}

absl::Status CheckpointWriter::Finish() {
  TG_RETURN_IF_ERROR(CheckWritable());
  const int fd = fd_;
  fd_ = -1;
  error_ = SyncAndClose(fd, data_path_);
  // The other shards hold nothing: empty files, so TensorFlow finds every
  // shard the header counts.
  for (int shard = 1; shard < num_shards_ && error_.ok(); ++shard) {
    const std::string path = DataPath(prefix_, shard, num_shards_);
    const int empty = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    error_ = empty < 0 ? ErrnoToStatus(errno, "creating checkpoint data file", path)
                       : SyncAndClose(empty, path);
  }
  TG_RETURN_IF_ERROR(error_);
  AtSavePoint(SavePoint::kDataFileWritten, data_path_);
  error_ = WriteIndex();
  TG_RETURN_IF_ERROR(error_);
  finished_ = true;
  AtSavePoint(SavePoint::kIndexRenamed, IndexPath(prefix_));
  // The previous checkpoint of this prefix is gone with its index; failing to
  // remove its data files leaves garbage, not a broken checkpoint.
  RemovePrefixFiles(prefix_, num_shards_).IgnoreError();
  return absl::OkStatus();
}

// ---------------------------------------------------------------- merging

absl::Status MergeCheckpoints(const std::vector<std::string>& sources,
                              const std::string& destination, bool allow_missing_files) {
  std::vector<std::unique_ptr<CheckpointReader>> readers;
  for (const std::string& source : sources) {
    if (source == destination) {
      return errors::InvalidArgument("cannot merge checkpoint '", source, "' into itself");
    }
    auto reader = CheckpointReader::Open(source);
    if (!reader.ok() && absl::IsNotFound(reader.status()) && allow_missing_files) continue;
    TG_RETURN_IF_ERROR(reader.status());
    readers.push_back(*std::move(reader));
  }
  if (readers.empty()) {
    return errors::NotFound("none of the ", sources.size(),
                            " checkpoints to merge exists (first: '",
                            sources.empty() ? "" : sources[0], "')");
  }
  TG_ASSIGN_OR_RETURN(auto writer, CheckpointWriter::Create(destination));
  for (const auto& reader : readers) {
    for (const CheckpointReader::Entry& e : reader->entries()) {
      if (e.slices.empty()) {
        TG_ASSIGN_OR_RETURN(Tensor t, reader->Read(e.name));
        absl::Status s = writer->Add(e.name, t);
        if (!s.ok()) return WithContext(s, absl::StrCat("merging '", reader->prefix(), "'"));
        continue;
      }
      for (const TensorSlice& slice : e.slices) {
        TG_ASSIGN_OR_RETURN(Tensor piece, reader->Read(e.name, slice));
        absl::Status s = writer->AddSlice(e.name, e.shape, slice, piece);
        if (!s.ok()) return WithContext(s, absl::StrCat("merging '", reader->prefix(), "'"));
      }
    }
  }
  TG_RETURN_IF_ERROR(writer->Finish());
  readers.clear();
  // Best effort, as TensorFlow's: the merged checkpoint is committed.
  for (const std::string& source : sources) DeleteCheckpoint(source).IgnoreError();
  return absl::OkStatus();
}

}  // namespace checkpoint
}  // namespace tensorgrid
