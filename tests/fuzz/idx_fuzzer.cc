// Reading IDX files (client/data/idx.h), MNIST's and Fashion-MNIST's format,
// plain or gzip-compressed: a file that is not IDX is InvalidArgument, one
// whose data does not fit its header DataLoss, one too large
// ResourceExhausted; a file that reads encodes back to the same bytes.
//
// Input: byte 0 (bit 0: gzip the rest before writing it, so that valid
// streams reach the parser; raw bytes with gzip's magic test broken ones),
// then the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "client/data/idx.h"
#include "tests/fuzz/fuzz_util.h"

namespace tensorgrid {
namespace {

std::string Gzip(const std::string& bytes) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    fuzz::Fail("deflateInit2");
  }
  std::string out(deflateBound(&z, bytes.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) fuzz::Fail("deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void FuzzIdx(const std::string& file, bool gzip) {
  const std::string path = fuzz::TempDir() + "/data.idx";
  fuzz::WriteFileOrDie(path, gzip ? Gzip(file) : file);
  absl::StatusOr<Tensor> tensor = ReadIdx(path);
  if (!tensor.ok()) {
    fuzz::ExpectError(tensor.status(),
                      {absl::StatusCode::kInvalidArgument, absl::StatusCode::kDataLoss,
                       absl::StatusCode::kResourceExhausted},
                      "ReadIdx");
    return;
  }
  absl::StatusOr<std::string> encoded = EncodeIdx(*tensor);
  if (!encoded.ok()) fuzz::Fail(absl::StrCat("EncodeIdx: ", encoded.status().ToString()));
  // A plain file is read exactly; a gzip one's (decompressed) bytes are.
  if (!gzip && (file.size() < 2 || file[0] != '\x1f' || file[1] != '\x8b') && *encoded != file) {
    fuzz::Fail("an IDX file read does not encode back to its bytes");
  }
  if (gzip && *encoded != file) fuzz::Fail("a gzip IDX file does not encode back to its bytes");
}

}  // namespace
}  // namespace tensorgrid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensorgrid::fuzz::Init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensorgrid::fuzz::Input in(data, size);
  const bool gzip = (in.Byte() & 1) != 0;
  tensorgrid::FuzzIdx(in.Rest(), gzip);
  return 0;
}
