// CheckpointReader of tensor_bundle.h: the index table, its header and
// entries checked once at Open, tensors read and verified on demand.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/file.h"
#include "core/platform/status.h"
#include "core/util/crc32c.h"
#include "core/util/legacy_checkpoint.h"
#include "core/util/tensor_bundle.h"
#include "leveldb/env.h"
#include "leveldb/options.h"
#include "leveldb/table.h"

namespace tensorgrid {
namespace checkpoint {
namespace {

absl::Status BadIndex(const std::string& path, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("checkpoint index '", path, "' is corrupted: ", what));
}

// Dtypes whose tensors this build can hold (TensorFlow's variant, for one,
// it cannot).
bool IsReadableType(DataType dtype) {
  return DataTypeIsSupported(dtype) && !IsRefType(dtype) && dtype != DT_RESOURCE;
}

// Whether `entry`'s size fits its dtype and shape: exactly for fixed-size
// dtypes; for strings at least a byte per length plus the 4-byte length
// checksum (or nothing at all for no elements, as TensorFlow accepts).
bool SizeFits(const CheckpointReader::Entry& e) {
  const uint64_t n = static_cast<uint64_t>(e.shape.num_elements());
  if (e.dtype == DT_STRING) return (n == 0 && e.size == 0) || (n < e.size && e.size - n >= 4);
  if (!IsReadableType(e.dtype)) return true;  // Read says Unimplemented
  uint64_t bytes;
  return !__builtin_mul_overflow(n, static_cast<uint64_t>(DataTypeSize(e.dtype)), &bytes) &&
         e.size == bytes;
}

absl::StatusOr<CheckpointReader::Entry> ParseEntry(const std::string& key,
                                                   const leveldb::Slice& value,
                                                   const std::string& path, int num_shards) {
  const std::string name = absl::CHexEscape(key);
  BundleEntryProto proto;
  if (!proto.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    return BadIndex(path, absl::StrCat("the entry of tensor '", name, "' does not parse"));
  }
  CheckpointReader::Entry e;
  e.name = key;
  e.dtype = static_cast<DataType>(proto.dtype());
  if (proto.shape().unknown_rank() || proto.shape().dim_size() > kMaxTensorRank) {
    return BadIndex(path, absl::StrCat("tensor '", name, "' has no valid shape"));
  }
  std::vector<int64_t> dims;
  for (const auto& dim : proto.shape().dim()) dims.push_back(dim.size());
  auto shape = BuildTensorShape(dims);
  if (!shape.ok()) {
    return BadIndex(path, absl::StrCat("tensor '", name, "': ", shape.status().message()));
  }
  e.shape = *std::move(shape);
  for (const TensorSliceProto& slice_proto : proto.slices()) {
    auto slice = TensorSlice::FromProto(slice_proto);
    absl::Status s = slice.status();
    if (s.ok()) s = slice->SliceShape(e.shape).status();
    for (const TensorSlice& other : e.slices) {
      if (s.ok() && other.Overlaps(*slice, e.shape)) {
        s = errors::InvalidArgument("slice '", slice->DebugString(), "' overlaps slice '",
                                    other.DebugString(), "'");
      }
    }
    if (!s.ok()) return BadIndex(path, absl::StrCat("tensor '", name, "': ", s.message()));
    e.slices.push_back(*std::move(slice));
  }
  if (!e.slices.empty()) return e;  // no bytes of its own
  e.shard_id = proto.shard_id();
  e.offset = static_cast<uint64_t>(proto.offset());
  e.size = static_cast<uint64_t>(proto.size());
  e.crc32c = proto.crc32c();
  uint64_t end;
  if (e.shard_id < 0 || e.shard_id >= num_shards || proto.offset() < 0 || proto.size() < 0 ||
      __builtin_add_overflow(e.offset, e.size, &end)) {
    return BadIndex(path, absl::StrCat("tensor '", name, "' has shard ", e.shard_id, " of ",
                                       num_shards, ", offset ", proto.offset(), ", size ",
                                       proto.size()));
  }
  if (!SizeFits(e)) {
    return BadIndex(
        path, absl::StrCat("tensor '", name, "' of type ", DataTypeString(e.dtype), " and shape ",
                           e.shape.DebugString(), " cannot take ", e.size, " bytes"));
  }
  return e;
}

// Checks the header entry: shards, byte order, and versions (TensorFlow's
// rules: the bundle's min_consumer and bad_consumers against this reader).
absl::Status CheckHeader(const BundleHeaderProto& header, const std::string& path) {
  if (header.num_shards() < 1) {
    return BadIndex(path, absl::StrCat("the header says ", header.num_shards(), " data shards"));
  }
  if (header.endianness() == BundleHeaderProto::BIG) {
    return errors::Unimplemented("checkpoint index '", path,
                                 "' is of a big-endian bundle; tensorgrid reads little-endian "
                                 "bundles only");
  }
  if (header.endianness() != BundleHeaderProto::LITTLE) {
    return BadIndex(path, absl::StrCat("unknown endianness ", header.endianness()));
  }
  const VersionDef& v = header.version();
  if (v.min_consumer() > kTensorBundleVersion) {
    return errors::FailedPrecondition("checkpoint index '", path, "' needs a reader of version ",
                                      v.min_consumer(), " or newer; this build reads version ",
                                      kTensorBundleVersion);
  }
  for (int bad : v.bad_consumers()) {
    if (bad == kTensorBundleVersion) {
      return errors::FailedPrecondition("checkpoint index '", path,
                                        "' disallows readers of version ", bad,
                                        ", which this build is");
    }
  }
  return absl::OkStatus();
}

// One line on stderr the first time this process opens a legacy `prefix`.
void NoteLegacyOnce(const std::string& prefix) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* noted = new absl::flat_hash_set<std::string>();
  absl::MutexLock lock(&mu);
  if (!noted->insert(prefix).second) return;
  std::fprintf(stderr,
               "tensorgrid: checkpoint '%s' is in tensorgrid's pre-TensorFlow format; it "
               "restores, saves write TensorFlow's format\n",
               prefix.c_str());
}

// LevelDB allocates a block's whole size before it reads the block, trusting
// the block handles: the footer's (not checksummed) and the index block's.
// So a damaged handle could ask for an allocation of any size. These checks
// run first, on the file's bytes: the footer's magic, both of its handles
// inside the file, and, for an uncompressed index block (what tensorgrid and
// TensorFlow's bundle writer write), every data block handle in it. (A
// compressed index block is checked by its CRC-32C before LevelDB uses it.)
bool GetVarint64(absl::string_view* in, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    *value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;
constexpr size_t kBlockTrailerSize = 5;  // compression type, CRC-32C

absl::Status CheckBlockHandle(absl::string_view* in, uint64_t limit, const char* what,
                              uint64_t* offset, uint64_t* size, const std::string& path) {
  if (!GetVarint64(in, offset) || !GetVarint64(in, size)) {
    return BadIndex(path, absl::StrCat("the ", what, " handle does not decode"));
  }
  if (*offset > limit || *size > limit - *offset || kBlockTrailerSize > limit - *offset - *size) {
    return BadIndex(path, absl::StrCat("the ", what, " (", *size, " bytes at offset ", *offset,
                                       ") lies outside the file's ", limit, " bytes of blocks"));
  }
  return absl::OkStatus();
}

absl::Status CheckBlockHandles(const std::string& bytes, const std::string& path) {
  if (bytes.size() < kFooterSize) return BadIndex(path, "too short for a table footer");
  const uint64_t limit = bytes.size() - kFooterSize;  // blocks lie before the footer
  uint64_t magic = 0;
  for (int i = 0; i < 8; ++i) {
    magic |= uint64_t{static_cast<uint8_t>(bytes[bytes.size() - 8 + i])} << (8 * i);
  }
  if (magic != kTableMagic) return BadIndex(path, "no table magic in its footer");
  absl::string_view footer(bytes.data() + limit, kFooterSize - 8);
  uint64_t offset, size, index_offset, index_size;
  TG_RETURN_IF_ERROR(CheckBlockHandle(&footer, limit, "metaindex block", &offset, &size, path));
  TG_RETURN_IF_ERROR(
      CheckBlockHandle(&footer, limit, "index block", &index_offset, &index_size, path));
  if (bytes[index_offset + index_size] != 0) return absl::OkStatus();  // compressed
  // An index block: entries (shared, unshared and value lengths, the key's
  // unshared bytes, a block handle), then uint32 restart offsets and their count.
  absl::string_view block(bytes.data() + index_offset, index_size);
  if (block.size() < 4) return BadIndex(path, "the index block is too short");
  uint32_t restarts = 0;
  for (int i = 0; i < 4; ++i) {
    restarts |= uint32_t{static_cast<uint8_t>(block[block.size() - 4 + i])} << (8 * i);
  }
  if (restarts > (block.size() - 4) / 4) return BadIndex(path, "the index block's restarts overflow it");
  absl::string_view entries = block.substr(0, block.size() - 4 - 4 * uint64_t{restarts});
  while (!entries.empty()) {
    uint64_t shared, unshared, value_size;
    if (!GetVarint64(&entries, &shared) || !GetVarint64(&entries, &unshared) ||
        !GetVarint64(&entries, &value_size) || unshared > entries.size() ||
        value_size > entries.size() - unshared) {
      return BadIndex(path, "an index block entry does not decode");
    }
    absl::string_view value = entries.substr(unshared, value_size);
    entries.remove_prefix(unshared + value_size);
    TG_RETURN_IF_ERROR(CheckBlockHandle(&value, limit, "data block", &offset, &size, path));
  }
  return absl::OkStatus();
}

absl::Status IndexError(const leveldb::Status& s, const std::string& path) {
  if (s.IsIOError()) return absl::UnavailableError(absl::StrCat(path, ": ", s.ToString()));
  return BadIndex(path, s.ToString());
}

}  // namespace

CheckpointReader::CheckpointReader(std::string prefix, int num_shards)
    : prefix_(std::move(prefix)), num_shards_(num_shards) {}

CheckpointReader::~CheckpointReader() {
  for (const auto& [shard, fd] : fds_) ::close(fd);
}

std::string CheckpointReader::data_path(int shard) const {
  if (legacy_ != nullptr) return legacy_->data_path();
  return DataPath(prefix_, shard, num_shards_);
}

absl::StatusOr<std::unique_ptr<CheckpointReader>> CheckpointReader::Open(
    const std::string& prefix) {
  const std::string path = IndexPath(prefix);
  leveldb::Env* env = leveldb::Env::Default();
  uint64_t size = 0;
  leveldb::RandomAccessFile* raw_file = nullptr;
  if (!env->FileExists(path)) {
    return errors::NotFound("checkpoint '", prefix, "' not found: no index file '", path, "'");
  }
  leveldb::Status ls = env->GetFileSize(path, &size);
  if (ls.ok() && size == 0) return BadIndex(path, "the file is empty");
  if (ls.ok()) ls = env->NewRandomAccessFile(path, &raw_file);
  if (!ls.ok()) return IndexError(ls, path);
  std::unique_ptr<leveldb::RandomAccessFile> file(raw_file);

  char magic[8];
  leveldb::Slice head;
  if (file->Read(0, sizeof(magic), &head, magic).ok() && IsLegacyIndex(head.ToString())) {
    TG_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path, "checkpoint index"));
    TG_ASSIGN_OR_RETURN(auto legacy, LegacyReader::Open(prefix, path, bytes));
    NoteLegacyOnce(prefix);
    std::unique_ptr<CheckpointReader> reader(new CheckpointReader(prefix, 1));
    for (const LegacyReader::Entry& le : legacy->entries()) {
      Entry e;
      e.name = le.name;
      e.dtype = le.dtype;
      e.shape = le.shape;
      e.offset = le.offset;
      e.size = le.size;
      reader->entries_.push_back(std::move(e));
    }
    reader->legacy_ = std::move(legacy);
    return reader;
  }

  TG_ASSIGN_OR_RETURN(const std::string index_bytes, ReadFileToString(path, "checkpoint index"));
  TG_RETURN_IF_ERROR(CheckBlockHandles(index_bytes, path));
  leveldb::Options options;
  options.paranoid_checks = true;
  leveldb::Table* raw_table = nullptr;
  ls = leveldb::Table::Open(options, file.get(), size, &raw_table);
  if (!ls.ok()) return IndexError(ls, path);
  std::unique_ptr<leveldb::Table> table(raw_table);
  leveldb::ReadOptions read;
  read.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
  it->SeekToFirst();
  if (!it->Valid()) {
    return it->status().ok() ? BadIndex(path, "the table is empty: no header entry")
                             : IndexError(it->status(), path);
  }
  BundleHeaderProto header;
  if (!it->key().empty() ||
      !header.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
    return BadIndex(path, "no header entry, or one that does not parse");
  }
  TG_RETURN_IF_ERROR(CheckHeader(header, path));
  std::unique_ptr<CheckpointReader> reader(new CheckpointReader(prefix, header.num_shards()));
  for (it->Next(); it->Valid(); it->Next()) {
    const std::string key = it->key().ToString();
    TG_ASSIGN_OR_RETURN(Entry e, ParseEntry(key, it->value(), path, header.num_shards()));
    if (!key.empty() && key[0] == '\0') {
      reader->pieces_.emplace(key, std::move(e));
    } else {
      reader->entries_.push_back(std::move(e));
    }
  }
  if (!it->status().ok()) return IndexError(it->status(), path);
  TG_RETURN_IF_ERROR(reader->OpenDataFiles());
  return reader;
}

// Opens every data file an entry points into and checks each entry's bytes
// lie inside it.
absl::Status CheckpointReader::OpenDataFiles() {
  std::map<int, std::vector<const Entry*>> by_shard;
  for (const Entry& e : entries_) {
    if (e.slices.empty()) by_shard[e.shard_id].push_back(&e);
  }
  for (const auto& [key, e] : pieces_) {
    if (e.slices.empty()) by_shard[e.shard_id].push_back(&e);
  }
  for (const auto& [shard, entries] : by_shard) {
    const std::string path = data_path(shard);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) {
        return absl::DataLossError(absl::StrCat("checkpoint '", prefix_, "': data file '", path,
                                                "' named by its index is missing"));
      }
      return ErrnoToStatus(errno, "opening checkpoint data file", path);
    }
    fds_[shard] = fd;
    struct stat st;
    if (::fstat(fd, &st) != 0) return ErrnoToStatus(errno, "reading", path);
    const uint64_t file_size = static_cast<uint64_t>(st.st_size);
    for (const Entry* e : entries) {
      if (e->offset + e->size > file_size) {
        return absl::DataLossError(absl::StrCat(
            "checkpoint data file '", path, "' has ", file_size, " bytes, but tensor '",
            absl::CHexEscape(e->name), "' ends at byte ", e->offset + e->size,
            ": the file is truncated or belongs to another save"));
      }
    }
  }
  return absl::OkStatus();
}

const CheckpointReader::Entry* CheckpointReader::Find(const std::string& name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, const std::string& n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

absl::Status CheckpointReader::ReadAt(int shard, uint64_t offset, void* out, size_t n) const {
  const int fd = fds_.at(shard);
  char* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, "reading", data_path(shard));
    }
    if (r == 0) return absl::DataLossError("unexpected end of file");
    p += r;
    offset += static_cast<uint64_t>(r);
    n -= static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

namespace {

// Reads a varint64 at `*pos` of `bytes`; false if it runs off the end or
// past 64 bits.
bool GetVarint64(const std::string& bytes, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift <= 63 && *pos < bytes.size(); shift += 7) {
    const uint64_t b = static_cast<uint8_t>(bytes[(*pos)++]);
    *v |= (b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// Decodes TensorFlow's string layout (tensor_bundle.cc's writer) into `t`,
// computing the entry's CRC as TensorFlow does; an error says what is wrong.
absl::Status DecodeStrings(const std::string& bytes, Tensor* t, uint32_t* crc) {
  *crc = 0;
  if (bytes.empty()) return absl::OkStatus();  // no elements
  absl::Span<std::string> out = t->values<std::string>();
  std::vector<uint64_t> lengths(out.size());
  size_t pos = 0;
  for (uint64_t& n : lengths) {
    if (!GetVarint64(bytes, &pos, &n)) return absl::DataLossError("a string length is cut off");
    if (n <= UINT32_MAX) {
      const uint32_t n32 = static_cast<uint32_t>(n);
      *crc = crc32c::Extend(*crc, &n32, sizeof(n32));
    } else {
      *crc = crc32c::Extend(*crc, &n, sizeof(n));
    }
  }
  if (bytes.size() - pos < 4) return absl::DataLossError("the length checksum is cut off");
  uint32_t stored = 0;
  for (int i = 0; i < 4; ++i) stored |= uint32_t{static_cast<uint8_t>(bytes[pos + i])} << (8 * i);
  if (crc32c::Unmask(stored) != *crc) {
    return absl::DataLossError("the string lengths do not match their checksum");
  }
  *crc = crc32c::Extend(*crc, bytes.data() + pos, 4);
  pos += 4;
  const size_t strings_begin = pos;
  for (size_t i = 0; i < out.size(); ++i) {
    if (bytes.size() - pos < lengths[i]) {
      return absl::DataLossError("the string lengths exceed the tensor's bytes");
    }
    out[i].assign(bytes.data() + pos, lengths[i]);
    pos += lengths[i];
  }
  if (pos != bytes.size()) return absl::DataLossError("bytes left after the last string");
  *crc = crc32c::Extend(*crc, bytes.data() + strings_begin, bytes.size() - strings_begin);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tensor> CheckpointReader::ReadWhole(const Entry& e) const {
  const std::string where = absl::StrCat("tensor '", absl::CHexEscape(e.name),
                                         "' in checkpoint data file '", data_path(e.shard_id), "'");
  TG_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(e.dtype, e.shape));
  std::string strings;
  void* dst = t.raw_data();
  if (e.dtype == DT_STRING) {
    strings.resize(e.size);
    dst = strings.data();
  }
  absl::Status s = ReadAt(e.shard_id, e.offset, dst, e.size);
  if (absl::IsDataLoss(s)) return absl::DataLossError(absl::StrCat(where, ": ", s.message()));
  TG_RETURN_IF_ERROR(s);
  uint32_t crc = 0;
  if (e.dtype == DT_STRING) {
    s = DecodeStrings(strings, &t, &crc);
    if (!s.ok()) return absl::DataLossError(absl::StrCat(where, " is corrupted: ", s.message()));
  } else {
    crc = crc32c::Value(dst, e.size);
  }
  if (crc != crc32c::Unmask(e.crc32c)) {
    return absl::DataLossError(absl::StrFormat(
        "%s is corrupted: checksum mismatch (index says 0x%08x, the bytes give 0x%08x)", where,
        crc32c::Unmask(e.crc32c), crc));
  }
  CanonicalizeBools(&t);  // the file's bytes, as they are
  return t;
}

absl::StatusOr<Tensor> CheckpointReader::Read(const std::string& name) const {
  const Entry* e = Find(name);
  if (e == nullptr) {
    return errors::NotFound("tensor '", name, "' not found in checkpoint '", prefix_, "'");
  }
  if (legacy_ != nullptr) return legacy_->Read(name);
  if (e->slices.empty()) {
    if (!IsReadableType(e->dtype)) {
      return errors::Unimplemented("tensor '", name, "' in checkpoint '", prefix_, "' has dtype ",
                                   DataTypeString(e->dtype), ", which tensorgrid cannot hold");
    }
    return ReadWhole(*e);
  }
  return ReadSliced(*e, TensorSlice::Full(e->shape.dims()));
}

absl::StatusOr<Tensor> CheckpointReader::Read(const std::string& name,
                                              const TensorSlice& slice) const {
  const Entry* e = Find(name);
  if (e == nullptr) {
    return errors::NotFound("tensor '", name, "' not found in checkpoint '", prefix_, "'");
  }
  return ReadSliced(*e, slice);
}

// Assembles `slice` of `e` from the whole stored tensor or from its stored
// slices. The stored slices do not overlap (Open checked), so counting the
// elements they share with `slice` tells whether they cover it — before
// anything is allocated.
absl::StatusOr<Tensor> CheckpointReader::ReadSliced(const Entry& e,
                                                    const TensorSlice& slice) const {
  const std::string what =
      absl::StrCat("tensor '", absl::CHexEscape(e.name), "' in checkpoint '", prefix_, "'");
  if (!IsReadableType(e.dtype)) {
    return errors::Unimplemented(what, " has dtype ", DataTypeString(e.dtype),
                                 ", which tensorgrid cannot hold");
  }
  auto slice_shape = slice.SliceShape(e.shape);
  if (!slice_shape.ok()) {
    return errors::InvalidArgument(what, " of shape ", e.shape.DebugString(),
                                   ": cannot read slice '", slice.DebugString(),
                                   "': ", slice_shape.status().message());
  }
  if (e.slices.empty()) {
    TG_ASSIGN_OR_RETURN(Tensor whole, legacy_ != nullptr ? legacy_->Read(e.name) : ReadWhole(e));
    if (slice.IsFull()) return whole;
    TG_ASSIGN_OR_RETURN(Tensor part, Tensor::Allocate(e.dtype, *slice_shape));
    CopyIntersection(e.shape, TensorSlice::Full(e.shape.dims()), whole, slice, &part);
    return part;
  }
  int64_t covered = 0;
  for (const TensorSlice& stored : e.slices) covered += IntersectionSize(e.shape, stored, slice);
  if (covered != slice_shape->num_elements()) {
    return errors::InvalidArgument(what, " is stored in slices that do not cover slice '",
                                   slice.DebugString(), "'");
  }
  TG_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(e.dtype, *slice_shape));
  for (const TensorSlice& stored : e.slices) {
    if (IntersectionSize(e.shape, stored, slice) == 0) continue;
    auto it = pieces_.find(EncodeTensorNameSlice(e.name, stored));
    const TensorShape stored_shape = *stored.SliceShape(e.shape);
    if (it == pieces_.end() || !it->second.slices.empty() || it->second.dtype != e.dtype ||
        it->second.shape != stored_shape) {
      return absl::DataLossError(absl::StrCat("checkpoint index '", IndexPath(prefix_),
                                              "' is corrupted: slice '", stored.DebugString(),
                                              "' of ", what, " is missing or not ",
                                              DataTypeString(e.dtype), " ",
                                              stored_shape.DebugString()));
    }
    TG_ASSIGN_OR_RETURN(Tensor piece, ReadWhole(it->second));
    CopyIntersection(e.shape, stored, piece, slice, &out);
  }
  return out;
}

}  // namespace checkpoint
}  // namespace tensorgrid
