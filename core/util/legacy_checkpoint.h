// The reader of tensorgrid's checkpoint format from before it adopted
// TensorFlow's tensor bundle (docs/checkpoints.md, "Legacy checkpoints"):
// `<prefix>.index` starting with the magic "TGCKPIDX" (every entry and a
// CRC-32 of the whole index) and `<prefix>.data-<16 hex digits>` (a header
// with the same id, then the tensors' bytes). Read-only: saves write
// TensorFlow's format. CheckpointReader (tensor_bundle.h) opens these
// through it; nothing else should (tests and the fuzz target name files).
//
// Thread safety: a LegacyReader may be read from many threads at once.
#ifndef TENSORGRID_CORE_UTIL_LEGACY_CHECKPOINT_H_
#define TENSORGRID_CORE_UTIL_LEGACY_CHECKPOINT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/framework/tensor.h"

namespace tensorgrid {
namespace checkpoint {

// Whether an index file's bytes start with the legacy magic.
bool IsLegacyIndex(absl::string_view index_bytes);
// "<prefix>.data-<id as 16 lower-case hex digits>".
std::string LegacyDataPath(const std::string& prefix, uint64_t checkpoint_id);

class LegacyReader {
 public:
  struct Entry {
    std::string name;
    DataType dtype = DT_INVALID;
    TensorShape shape;
    uint64_t offset = 0;  // in the data file
    uint64_t size = 0;    // bytes
    uint32_t crc32 = 0;   // zlib's CRC-32 of those bytes
  };

  // Verifies the index (`index_bytes`, read from `index_path`) and checks the
  // data file's header and size against it. DataLoss for a damaged index or
  // data file; FailedPrecondition for a newer format version.
  static absl::StatusOr<std::unique_ptr<LegacyReader>> Open(const std::string& prefix,
                                                            const std::string& index_path,
                                                            const std::string& index_bytes);
  ~LegacyReader();
  LegacyReader(const LegacyReader&) = delete;
  LegacyReader& operator=(const LegacyReader&) = delete;

  // The entry named `name`, or nullptr.
  const Entry* Find(const std::string& name) const;
  // Entries sorted by name.
  const std::vector<Entry>& entries() const { return entries_; }
  // The tensor named `name`, its bytes verified against the index's CRC.
  // NotFound naming the tensor and the checkpoint; DataLoss naming the data
  // file and the tensor.
  absl::StatusOr<Tensor> Read(const std::string& name) const;

  const std::string& data_path() const { return data_path_; }

 private:
  LegacyReader(std::string prefix, std::string data_path, int fd, std::vector<Entry> entries);
  absl::Status ReadAt(uint64_t offset, void* out, size_t n) const;

  const std::string prefix_;
  const std::string data_path_;
  const int fd_;
  const std::vector<Entry> entries_;
};

}  // namespace checkpoint
}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_LEGACY_CHECKPOINT_H_
