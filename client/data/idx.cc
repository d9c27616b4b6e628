#include "client/data/idx.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "core/platform/file.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

constexpr absl::string_view kDatasetsDir = "/usr/share/datasets/";

struct IdxType {
  uint8_t code;
  DataType dtype;
};
constexpr IdxType kIdxTypes[] = {
    {0x08, DT_UINT8}, {0x09, DT_INT8},  {0x0B, DT_INT16},
    {0x0C, DT_INT32}, {0x0D, DT_FLOAT}, {0x0E, DT_DOUBLE},
};

template <typename U>
void SwapEach(char* p, int64_t count, U (*swap)(U)) {
  for (int64_t i = 0; i < count; ++i, p += sizeof(U)) {
    U v;
    std::memcpy(&v, p, sizeof(U));
    v = swap(v);
    std::memcpy(p, &v, sizeof(U));
  }
}
uint16_t Swap16(uint16_t v) { return __builtin_bswap16(v); }
uint32_t Swap32(uint32_t v) { return __builtin_bswap32(v); }
uint64_t Swap64(uint64_t v) { return __builtin_bswap64(v); }

// Converts big-endian values to host order (or back) in place.
void SwapToHostOrder(void* data, int64_t count, int element_bytes) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  char* p = static_cast<char*>(data);
  if (element_bytes == 2) SwapEach(p, count, Swap16);
  if (element_bytes == 4) SwapEach(p, count, Swap32);
  if (element_bytes == 8) SwapEach(p, count, Swap64);
#endif
}

// The bytes of a plain or gzip-compressed file, read front to back.
class ByteSource {
 public:
  static absl::StatusOr<std::unique_ptr<ByteSource>> Open(const std::string& path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      return errno == ENOENT || errno == ENOTDIR ? MissingDataFile(path)
                                                 : ErrnoToStatus(errno, "cannot open", path);
    }
    if (S_ISDIR(st.st_mode))
      return errors::InvalidArgument(path, " is a directory, not an IDX file");
    FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) return ErrnoToStatus(errno, "cannot open", path);
    unsigned char magic[2] = {0, 0};
    size_t n = std::fread(magic, 1, 2, file);
    std::unique_ptr<ByteSource> source(new ByteSource(path));
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
      std::fclose(file);
      source->gz_ = gzopen(path.c_str(), "rb");
      if (source->gz_ == nullptr) return ErrnoToStatus(errno, "cannot open", path);
      gzbuffer(source->gz_, 1 << 18);
    } else {
      std::rewind(file);
      source->file_ = file;
      source->plain_size_ = static_cast<int64_t>(st.st_size);
    }
    return source;
  }
  ~ByteSource() {
    if (file_ != nullptr) std::fclose(file_);
    if (gz_ != nullptr) gzclose(gz_);
  }

  bool compressed() const { return gz_ != nullptr; }
  // File size for a plain file; -1 for gzip (unknown until decompressed).
  int64_t plain_size() const { return plain_size_; }

  // Reads up to `n` bytes; fewer only at the end of the data.
  absl::StatusOr<size_t> Read(void* dst, size_t n) {
    size_t done = 0;
    while (done < n) {
      size_t chunk = std::min<size_t>(n - done, 1u << 30);
      char* at = static_cast<char*>(dst) + done;
      size_t got;
      if (gz_ != nullptr) {
        int r = gzread(gz_, at, static_cast<unsigned>(chunk));
        if (r < 0) return GzipError();
        got = static_cast<size_t>(r);
      } else {
        got = std::fread(at, 1, chunk, file_);
        if (got < chunk && std::ferror(file_)) return ErrnoToStatus(errno, "cannot read", path_);
      }
      done += got;
      if (got < chunk) break;
    }
    return done;
  }

  // Counts the bytes left (reading them).
  absl::StatusOr<int64_t> CountRemaining() {
    char buf[1 << 16];
    int64_t total = 0;
    for (;;) {
      TG_ASSIGN_OR_RETURN(size_t got, Read(buf, sizeof(buf)));
      total += static_cast<int64_t>(got);
      if (got < sizeof(buf)) return total;
    }
  }

  // " (gzip: ...)" when zlib saw a damaged stream, else "".
  std::string GzipNote() const {
    if (gz_ == nullptr) return "";
    int err = Z_OK;
    const char* msg = gzerror(gz_, &err);
    return err == Z_OK ? "" : absl::StrCat(" (gzip: ", msg, ")");
  }

 private:
  explicit ByteSource(std::string path) : path_(std::move(path)) {}
  absl::Status GzipError() const {
    int err = Z_OK;
    const char* msg = gzerror(gz_, &err);
    if (err == Z_ERRNO) return ErrnoToStatus(errno, "cannot read", path_);
    return absl::DataLossError(absl::StrCat(path_, ": corrupt gzip data: ", msg));
  }

  std::string path_;
  FILE* file_ = nullptr;
  gzFile gz_ = nullptr;
  int64_t plain_size_ = -1;
};

uint32_t LoadBigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Reads the header: dtype and shape.
absl::Status ReadHeader(ByteSource& src, const std::string& path, DataType* dtype,
                        TensorShape* shape) {
  unsigned char magic[4];
  TG_ASSIGN_OR_RETURN(size_t got, src.Read(magic, 4));
  if (got < 4) {
    return absl::DataLossError(absl::StrCat(
        path, ": truncated IDX header: expected 4 magic bytes, found ", got, src.GzipNote()));
  }
  if (magic[0] != 0 || magic[1] != 0) {
    return errors::InvalidArgument(
        path, " is not an IDX file: it starts with ",
        absl::StrFormat("%02x %02x %02x %02x", magic[0], magic[1], magic[2], magic[3]),
        "; IDX starts with 00 00, a type code (08, 09, 0b, 0c, 0d or 0e) and the rank");
  }
  *dtype = DT_INVALID;
  for (const IdxType& t : kIdxTypes) {
    if (t.code == magic[2]) *dtype = t.dtype;
  }
  if (*dtype == DT_INVALID) {
    return errors::InvalidArgument(path, ": unknown IDX type code ",
                                   absl::StrFormat("0x%02x", magic[2]),
                                   " (known: 08 uint8, 09 int8, 0b int16, 0c int32, 0d float32, "
                                   "0e float64)");
  }
  int rank = magic[3];
  if (rank < 1 || rank > kMaxTensorRank) {
    return errors::InvalidArgument(path, ": IDX rank ", rank, " is not in [1, ", kMaxTensorRank,
                                   "]");
  }
  unsigned char dim_bytes[4 * kMaxTensorRank];
  TG_ASSIGN_OR_RETURN(got, src.Read(dim_bytes, 4 * rank));
  if (got < static_cast<size_t>(4 * rank)) {
    return absl::DataLossError(absl::StrCat(path, ": truncated IDX header: expected ", 4 * rank,
                                            " bytes of dimensions for rank ", rank, ", found ", got,
                                            src.GzipNote()));
  }
  std::vector<int64_t> dims(rank);
  for (int d = 0; d < rank; ++d) dims[d] = LoadBigEndian32(dim_bytes + 4 * d);
  auto built = BuildTensorShape(dims);
  if (!built.ok()) return WithContext(built.status(), absl::StrCat(path, ": IDX dimensions"));
  *shape = *built;
  return absl::OkStatus();
}

}  // namespace

absl::Status MissingDataFile(absl::string_view path) {
  if (absl::StartsWith(path, kDatasetsDir)) {
    absl::string_view rest = path.substr(kDatasetsDir.size());
    std::string package = absl::StrCat("dataset-", rest.substr(0, rest.find('/')));
    return errors::NotFound(path, " not found; install Debian's ", package,
                            " package (apt-get install ", package, ")");
  }
  return errors::NotFound(path, " not found");
}

absl::StatusOr<Tensor> ReadIdx(const std::string& path) {
  TG_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> src, ByteSource::Open(path));
  DataType dtype;
  TensorShape shape;
  TG_RETURN_IF_ERROR(ReadHeader(*src, path, &dtype, &shape));
  const int64_t header_bytes = 4 + 4 * shape.dims();
  int64_t data_bytes;
  // Dimensions of up to 2^32 - 1 each can describe more bytes than int64
  // counts (the multiplication overflowed: found by idx_fuzzer). No file
  // holds that much.
  if (__builtin_mul_overflow(shape.num_elements(), int64_t{DataTypeSize(dtype)}, &data_bytes) ||
      data_bytes > INT64_MAX - header_bytes) {
    return absl::DataLossError(absl::StrCat(path, ": shape ", shape.DebugString(), " of ",
                                            DataTypeString(dtype),
                                            " needs more than 2^63 bytes of data; no file has them"));
  }
  // DataLoss for `found` bytes of data where the header promises data_bytes.
  auto size_mismatch = [&](int64_t found, absl::string_view note) {
    return absl::DataLossError(absl::StrCat(
        path, found < data_bytes ? ": truncated: " : ": ", "shape ", shape.DebugString(), " of ",
        DataTypeString(dtype), " needs ", data_bytes, " bytes of data after the ", header_bytes,
        "-byte header, found ", found,
        found > data_bytes ? absl::StrCat(" (", found - data_bytes, " trailing bytes)") : "",
        note));
  };
  // A plain file's size is known: check it before allocating anything.
  if (!src->compressed() && src->plain_size() != header_bytes + data_bytes) {
    return size_mismatch(src->plain_size() - header_bytes, "");
  }
  auto allocated = Tensor::Allocate(dtype, shape);
  if (!allocated.ok()) return WithContext(allocated.status(), path);
  Tensor tensor = std::move(allocated).value();
  TG_ASSIGN_OR_RETURN(size_t got, src->Read(tensor.raw_data(), static_cast<size_t>(data_bytes)));
  if (static_cast<int64_t>(got) < data_bytes) return size_mismatch(got, src->GzipNote());
  TG_ASSIGN_OR_RETURN(int64_t trailing, src->CountRemaining());
  if (trailing > 0) return size_mismatch(data_bytes + trailing, "");
  SwapToHostOrder(tensor.raw_data(), tensor.NumElements(), DataTypeSize(dtype));
  return tensor;
}

absl::StatusOr<std::string> EncodeIdx(const Tensor& tensor) {
  uint8_t code = 0;
  for (const IdxType& t : kIdxTypes) {
    if (t.dtype == tensor.dtype()) code = t.code;
  }
  if (code == 0) {
    return errors::InvalidArgument("IDX cannot hold ", DataTypeString(tensor.dtype()),
                                   " (only uint8, int8, int16, int32, float and double)");
  }
  if (tensor.dims() < 1) return errors::InvalidArgument("IDX needs rank >= 1, got a scalar");
  std::string out;
  out.reserve(4 + 4 * tensor.dims() + tensor.TotalBytes());
  out.append({'\0', '\0', static_cast<char>(code), static_cast<char>(tensor.dims())});
  for (int d = 0; d < tensor.dims(); ++d) {
    int64_t size = tensor.dim_size(d);
    if (size > 0xffffffffLL) {
      return errors::InvalidArgument("IDX dimensions are uint32; dimension ", d, " is ", size);
    }
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(size >> shift));
  }
  size_t header = out.size();
  out.append(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
  SwapToHostOrder(&out[header], tensor.NumElements(), DataTypeSize(tensor.dtype()));
  return out;
}

absl::Status WriteIdx(const std::string& path, const Tensor& tensor, bool gzip) {
  TG_ASSIGN_OR_RETURN(std::string bytes, EncodeIdx(tensor));
  if (gzip) {
    gzFile gz = gzopen(path.c_str(), "wb");
    if (gz == nullptr) return ErrnoToStatus(errno, "cannot create", path);
    size_t done = 0;
    while (done < bytes.size()) {
      unsigned chunk = static_cast<unsigned>(std::min<size_t>(bytes.size() - done, 1u << 30));
      if (gzwrite(gz, bytes.data() + done, chunk) != static_cast<int>(chunk)) {
        gzclose(gz);
        return ErrnoToStatus(errno, "cannot write", path);
      }
      done += chunk;
    }
    if (gzclose(gz) != Z_OK) return ErrnoToStatus(errno, "cannot write", path);
    return absl::OkStatus();
  }
  return WriteWholeFile(path, bytes);
}

}  // namespace tensorgrid
