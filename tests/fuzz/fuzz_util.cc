#include "tests/fuzz/fuzz_util.h"

#include <ftw.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "core/framework/tensor.h"
#include "google/protobuf/stubs/logging.h"

namespace tensorgrid {
namespace fuzz {

uint8_t Input::Byte() {
  if (rest_.empty()) return 0;
  const uint8_t b = static_cast<uint8_t>(rest_[0]);
  rest_.remove_prefix(1);
  return b;
}

uint32_t Input::U32() {
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= uint32_t{Byte()} << (8 * i);
  return n;
}

std::string Input::Bytes(size_t n) {
  n = std::min(n, rest_.size());
  std::string out(rest_.substr(0, n));
  rest_.remove_prefix(n);
  return out;
}

std::string Input::Until(absl::string_view separator) {
  const size_t at = rest_.find(separator);
  if (at == absl::string_view::npos) return Rest();
  std::string out(rest_.substr(0, at));
  rest_.remove_prefix(at + separator.size());
  return out;
}

std::string Input::Rest() { return Bytes(rest_.size()); }

void Init() {
  SetMaxTensorBytes(int64_t{64} << 20);
  SetTensorBufferCacheBytes(0);
  google::protobuf::SetLogHandler(nullptr);
}

namespace {

int RemoveOne(const char* path, const struct stat*, int, struct FTW*) { return std::remove(path); }

}  // namespace

const std::string& TempDir() {
  static const std::string* const dir = [] {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern = absl::StrCat(base != nullptr ? base : "/tmp", "/tg_fuzz.XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) Fail("cannot make a temporary directory");
    auto* made = new std::string(pattern);
    std::atexit([] { nftw(TempDir().c_str(), RemoveOne, 16, FTW_DEPTH | FTW_PHYS); });
    return made;
  }();
  return *dir;
}

void WriteFileOrDie(const std::string& path, absl::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) Fail(absl::StrCat("cannot write ", path));
}

void ExpectError(const absl::Status& status, std::initializer_list<absl::StatusCode> codes,
                 absl::string_view what) {
  if (status.ok()) Fail(absl::StrCat(what, ": OK where an error was expected"));
  if (std::find(codes.begin(), codes.end(), status.code()) == codes.end()) {
    Fail(absl::StrCat(what, ": unexpected error code: ", status.ToString()));
  }
  if (status.message().empty()) Fail(absl::StrCat(what, ": an error without a message"));
}

void Fail(absl::string_view message) {
  std::fprintf(stderr, "fuzz check failed: %.*s\n", static_cast<int>(message.size()),
               message.data());
  std::abort();
}

}  // namespace fuzz
}  // namespace tensorgrid
