// What the fuzz targets (tests/fuzz/*_fuzzer.cc, docs/fuzzing.md) share: a
// reader that takes typed values off the front of an input, the resource
// limits every target runs under, a scratch directory, and the check that a
// refusal is an error with a code and a message.
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     fuzz::Input in(data, size);
//     const bool binary = in.Byte() & 1;
//     absl::StatusOr<Thing> parsed = ParseThing(in.Rest());
//     if (!parsed.ok()) fuzz::ExpectError(parsed.status(), {absl::StatusCode::kInvalidArgument});
//     return 0;
//   }
//
// A failed expectation aborts, which libFuzzer reports as a crash with the
// input that caused it.
#ifndef TENSORGRID_TESTS_FUZZ_FUZZ_UTIL_H_
#define TENSORGRID_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tensorgrid {
namespace fuzz {

// Takes values off the front of an input; once it runs dry, zeros and empty
// strings (so every input means something).
class Input {
 public:
  Input(const uint8_t* data, size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}
  uint8_t Byte();
  uint32_t U32();  // little-endian
  // Up to `n` bytes.
  std::string Bytes(size_t n);
  // Bytes up to the next occurrence of `separator` (which is skipped), or
  // all that is left.
  std::string Until(absl::string_view separator);
  std::string Rest();
  size_t remaining() const { return rest_.size(); }

 private:
  absl::string_view rest_;
};

// Run once per process, first (LLVMFuzzerInitialize): tensors of at most
// 64 MiB (a fuzz input reaches the production limit of 64 GiB with a few
// bytes: TensorProto's broadcast rule, a shape in a header; that limit is
// what protects a server, and fuzzing it only finds the machine's memory),
// no cache of freed tensor buffers, so AddressSanitizer sees every use after
// free, and no protobuf log line for each malformed string it parses.
void Init();

// A directory of this process's own, removed when it exits.
const std::string& TempDir();
// Writes `bytes` to `path`, replacing it; aborts when it cannot.
void WriteFileOrDie(const std::string& path, absl::string_view bytes);

// Aborts unless `status` is an error with one of `codes` and a message:
// a malformed input must be refused with a meaningful code, never OK by
// accident, never Unknown or Internal. `what` names the call in the report.
void ExpectError(const absl::Status& status, std::initializer_list<absl::StatusCode> codes,
                 absl::string_view what);
// Aborts with `message` (a broken invariant: libFuzzer keeps the input).
[[noreturn]] void Fail(absl::string_view message);

}  // namespace fuzz
}  // namespace tensorgrid

#endif  // TENSORGRID_TESTS_FUZZ_FUZZ_UTIL_H_
