// The reader of legacy_checkpoint.h: tensorgrid's format before it adopted
// TensorFlow's (docs/checkpoints.md, "Legacy checkpoints"). Integers are
// little-endian byte by byte; tensor contents are copied as they lie in
// memory, which is why the build requires a little-endian host.
#include "core/util/legacy_checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/file.h"
#include "core/platform/status.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "checkpoint tensor bytes are stored little-endian as they lie in memory");

namespace tensorgrid {
namespace checkpoint {
namespace {

constexpr char kIndexMagic[8] = {'T', 'G', 'C', 'K', 'P', 'I', 'D', 'X'};
constexpr char kDataMagic[8] = {'T', 'G', 'C', 'K', 'D', 'A', 'T', 'A'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kIndexHeaderBytes = 40;  // magic, version, flags, id, data size, count
constexpr size_t kDataHeaderBytes = 24;   // magic, version, flags, id
constexpr size_t kIndexFooterBytes = 4;   // CRC-32 of everything before it

uint32_t Crc32(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const Bytef*>(data);
  while (n > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = static_cast<uint32_t>(::crc32(crc, p, chunk));
    p += chunk;
    n -= chunk;
  }
  return crc;
}

// ---------------------------------------------------------------- encoding

uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}
uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

// Reads the parts of an index in order; any read past the end fails.
class IndexCursor {
 public:
  IndexCursor(const std::string& bytes, size_t begin, size_t end)
      : bytes_(bytes), pos_(begin), end_(end) {}
  bool U32(uint32_t* v) {
    if (end_ - pos_ < 4) return false;
    *v = GetU32(bytes_.data() + pos_);
    pos_ += 4;
    return true;
  }
  bool U64(uint64_t* v) {
    if (end_ - pos_ < 8) return false;
    *v = GetU64(bytes_.data() + pos_);
    pos_ += 8;
    return true;
  }
  bool Bytes(size_t n, std::string* out) {
    if (end_ - pos_ < n) return false;
    out->assign(bytes_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool AtEnd() const { return pos_ == end_; }

 private:
  const std::string& bytes_;
  size_t pos_;
  const size_t end_;
};

bool IsSaveableType(DataType dtype) {
  return DataTypeIsSupported(dtype) && !IsRefType(dtype) && dtype != DT_RESOURCE;
}

absl::Status BadIndex(const std::string& path, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("checkpoint index '", path, "' is corrupted: ", what));
}

// The bytes a tensor of `entry`'s dtype and shape must (POD) or may at least
// (string: an 8-byte length per element) take.
bool SizeFits(const LegacyReader::Entry& entry) {
  const int64_t n = entry.shape.num_elements();
  uint64_t bytes;
  if (entry.dtype == DT_STRING) {
    if (__builtin_mul_overflow(static_cast<uint64_t>(n), uint64_t{8}, &bytes)) return false;
    return entry.size >= bytes;
  }
  if (__builtin_mul_overflow(static_cast<uint64_t>(n),
                             static_cast<uint64_t>(DataTypeSize(entry.dtype)), &bytes)) {
    return false;
  }
  return entry.size == bytes;
}

absl::StatusOr<LegacyReader::Entry> ParseEntry(IndexCursor& in, const std::string& path) {
  LegacyReader::Entry e;
  uint32_t name_len, dtype, rank;
  if (!in.U32(&name_len) || !in.Bytes(name_len, &e.name) || !in.U32(&dtype) || !in.U32(&rank)) {
    return BadIndex(path, "an entry runs past the end");
  }
  e.dtype = static_cast<DataType>(dtype);
  if (!IsSaveableType(e.dtype)) {
    return BadIndex(path, absl::StrCat("tensor '", e.name, "' has invalid dtype ", dtype));
  }
  if (rank > static_cast<uint32_t>(kMaxTensorRank)) {
    return BadIndex(path, absl::StrCat("tensor '", e.name, "' has rank ", rank));
  }
  std::vector<int64_t> dims(rank);
  for (int64_t& d : dims) {
    uint64_t v;
    if (!in.U64(&v)) return BadIndex(path, "an entry runs past the end");
    d = static_cast<int64_t>(v);
  }
  auto shape = BuildTensorShape(dims);
  if (!shape.ok()) {
    return BadIndex(path, absl::StrCat("tensor '", e.name, "': ", shape.status().message()));
  }
  e.shape = *std::move(shape);
  if (!in.U64(&e.offset) || !in.U64(&e.size) || !in.U32(&e.crc32)) {
    return BadIndex(path, "an entry runs past the end");
  }
  if (!SizeFits(e)) {
    return BadIndex(
        path, absl::StrCat("tensor '", e.name, "' of type ", DataTypeString(e.dtype), " and shape ",
                           e.shape.DebugString(), " cannot take ", e.size, " bytes"));
  }
  return e;
}

// Decodes the string elements of `bytes` into `t`; false if they do not fit.
bool DecodeStrings(const std::string& bytes, Tensor* t) {
  size_t pos = 0;
  for (std::string& s : t->values<std::string>()) {
    if (bytes.size() - pos < 8) return false;
    const uint64_t len = GetU64(bytes.data() + pos);
    pos += 8;
    if (bytes.size() - pos < len) return false;
    s.assign(bytes.data() + pos, len);
    pos += len;
  }
  return pos == bytes.size();
}

}  // namespace

// ---------------------------------------------------------------- reader

namespace {

struct ParsedIndex {
  uint64_t id = 0;
  uint64_t data_size = 0;
  std::vector<LegacyReader::Entry> entries;
};

absl::StatusOr<ParsedIndex> ParseIndex(const std::string& bytes, const std::string& path) {
  if (bytes.size() < kIndexHeaderBytes + kIndexFooterBytes) {
    return BadIndex(path,
                    absl::StrCat("it has ", bytes.size(), " bytes, fewer than the ",
                                 kIndexHeaderBytes + kIndexFooterBytes, " of an empty index"));
  }
  if (std::memcmp(bytes.data(), kIndexMagic, sizeof(kIndexMagic)) != 0) {
    return BadIndex(path, "bad magic: not a tensorgrid checkpoint index");
  }
  const size_t body = bytes.size() - kIndexFooterBytes;
  const uint32_t stored = GetU32(bytes.data() + body);
  const uint32_t computed = Crc32(0, bytes.data(), body);
  if (stored != computed) {
    return BadIndex(path, absl::StrFormat("checksum mismatch (stored 0x%08x, computed 0x%08x); "
                                          "the file is damaged or truncated",
                                          stored, computed));
  }
  IndexCursor in(bytes, sizeof(kIndexMagic), body);
  uint32_t version, flags;
  ParsedIndex index;
  uint64_t count;
  in.U32(&version);
  in.U32(&flags);
  in.U64(&index.id);
  in.U64(&index.data_size);
  in.U64(&count);
  if (version != kFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("checkpoint index '", path, "' has format version ", version,
                     "; this build reads version ", kFormatVersion));
  }
  if (index.data_size < kDataHeaderBytes) return BadIndex(path, "data size below the header size");
  for (uint64_t i = 0; i < count; ++i) {
    TG_ASSIGN_OR_RETURN(LegacyReader::Entry e, ParseEntry(in, path));
    uint64_t end;
    if (e.offset < kDataHeaderBytes || __builtin_add_overflow(e.offset, e.size, &end) ||
        end > index.data_size) {
      return BadIndex(path, absl::StrCat("tensor '", e.name, "' lies outside the data file"));
    }
    if (!index.entries.empty() && !(index.entries.back().name < e.name)) {
      return BadIndex(path, absl::StrCat("tensor names out of order at '", e.name, "'"));
    }
    index.entries.push_back(std::move(e));
  }
  if (!in.AtEnd()) return BadIndex(path, "trailing bytes after the last entry");
  return index;
}

// Checks the data file's header and size against the index.
absl::Status CheckDataFile(int fd, const std::string& path, const ParsedIndex& index) {
  char header[kDataHeaderBytes];
  const ssize_t r = ::pread(fd, header, sizeof(header), 0);
  if (r < 0) return ErrnoToStatus(errno, "reading", path);
  if (static_cast<size_t>(r) < sizeof(header) ||
      std::memcmp(header, kDataMagic, sizeof(kDataMagic)) != 0 ||
      GetU32(header + 8) != kFormatVersion || GetU64(header + 16) != index.id) {
    return absl::DataLossError(absl::StrCat("checkpoint data file '", path,
                                            "' has a bad header: it does not belong to its index"));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoToStatus(errno, "reading", path);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == index.data_size) return absl::OkStatus();
  std::string cut;
  for (const LegacyReader::Entry& e : index.entries) {
    if (e.offset + e.size > size) {
      cut = absl::StrCat("; tensor '", e.name, "' is cut off");
      break;
    }
  }
  return absl::DataLossError(absl::StrCat(
      "checkpoint data file '", path, "' has ", size, " bytes, its index expects ", index.data_size,
      ": the file is ", size < index.data_size ? "truncated" : "damaged", cut));
}

}  // namespace

bool IsLegacyIndex(absl::string_view index_bytes) {
  return absl::StartsWith(index_bytes, absl::string_view(kIndexMagic, sizeof(kIndexMagic)));
}

std::string LegacyDataPath(const std::string& prefix, uint64_t checkpoint_id) {
  return absl::StrCat(prefix, ".data-", absl::StrFormat("%016x", checkpoint_id));
}

absl::StatusOr<std::unique_ptr<LegacyReader>> LegacyReader::Open(const std::string& prefix,
                                                                 const std::string& index_path,
                                                                 const std::string& index_bytes) {
  TG_ASSIGN_OR_RETURN(ParsedIndex index, ParseIndex(index_bytes, index_path));
  std::string data_path = LegacyDataPath(prefix, index.id);
  const int fd = ::open(data_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      return absl::DataLossError(absl::StrCat("checkpoint '", prefix, "': data file '", data_path,
                                              "' named by its index is missing"));
    }
    return ErrnoToStatus(errno, "opening", data_path);
  }
  absl::Status s = CheckDataFile(fd, data_path, index);
  if (!s.ok()) {
    ::close(fd);
    return s;
  }
  return std::unique_ptr<LegacyReader>(
      new LegacyReader(prefix, std::move(data_path), fd, std::move(index.entries)));
}

LegacyReader::LegacyReader(std::string prefix, std::string data_path, int fd,
                                   std::vector<Entry> entries)
    : prefix_(std::move(prefix)),
      data_path_(std::move(data_path)),
      fd_(fd),
      entries_(std::move(entries)) {}

LegacyReader::~LegacyReader() { ::close(fd_); }

const LegacyReader::Entry* LegacyReader::Find(const std::string& name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, const std::string& n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

absl::Status LegacyReader::ReadAt(uint64_t offset, void* out, size_t n) const {
  char* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, "reading", data_path_);
    }
    if (r == 0) return absl::DataLossError("unexpected end of file");
    p += r;
    offset += static_cast<uint64_t>(r);
    n -= static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> LegacyReader::Read(const std::string& name) const {
  const Entry* e = Find(name);
  if (e == nullptr) {
    return errors::NotFound("tensor '", name, "' not found in checkpoint '", prefix_, "'");
  }
  const std::string where =
      absl::StrCat("tensor '", name, "' in checkpoint data file '", data_path_, "'");
  TG_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(e->dtype, e->shape));
  std::string strings;
  void* dst = t.raw_data();
  if (e->dtype == DT_STRING) {
    strings.resize(e->size);
    dst = strings.data();
  }
  absl::Status s = ReadAt(e->offset, dst, e->size);
  if (absl::IsDataLoss(s)) return absl::DataLossError(absl::StrCat(where, ": ", s.message()));
  TG_RETURN_IF_ERROR(s);
  const uint32_t crc = Crc32(0, dst, e->size);
  if (crc != e->crc32) {
    return absl::DataLossError(absl::StrFormat(
        "%s is corrupted: checksum mismatch (index says 0x%08x, the bytes give 0x%08x)", where,
        e->crc32, crc));
  }
  if (e->dtype == DT_STRING && !DecodeStrings(strings, &t)) {
    return absl::DataLossError(absl::StrCat(where, " is corrupted: string lengths do not fit"));
  }
  CanonicalizeBools(&t);  // the file's bytes, as they are
  return t;
}

}  // namespace checkpoint
}  // namespace tensorgrid
