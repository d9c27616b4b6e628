// Checkpoint files: a writer and a reader for tensorgrid's own on-disk
// format (docs/checkpoints.md has the byte layout). A checkpoint `prefix` is
// two files:
//
//   <prefix>.index             name -> dtype, shape, offset, size, CRC32 per
//                              tensor, the whole index checksummed; written
//                              last, to a temporary name renamed into place
//                              (the commit point of a save)
//   <prefix>.data-<id>         the tensors' bytes; <id> (16 hex digits) is
//                              the random checkpoint id the index records
//
//   TG_ASSIGN_OR_RETURN(auto writer, CheckpointWriter::Create("/ckpt/model-10"));
//   TG_RETURN_IF_ERROR(writer->Add("w", w));
//   TG_RETURN_IF_ERROR(writer->Finish());
//
//   TG_ASSIGN_OR_RETURN(auto reader, CheckpointReader::Open("/ckpt/model-10"));
//   TG_ASSIGN_OR_RETURN(Tensor w, reader->Read("w"));
//
// Guarantees: a checkpoint appears complete or not at all. The data file gets
// a name of its own for every save and is synced before the index is renamed
// over `<prefix>.index`, so a crash at any point leaves either the previous
// checkpoint of that prefix or the new one, never a mix. Corrupted or
// truncated files are DataLoss naming the file and, where one is affected,
// the tensor; a missing checkpoint or tensor is NotFound naming it.
//
// Thread safety: a CheckpointWriter is used by one thread; a CheckpointReader
// may be read from many threads at once. One writer per prefix at a time.
#ifndef TENSORGRID_CORE_UTIL_CHECKPOINT_FORMAT_H_
#define TENSORGRID_CORE_UTIL_CHECKPOINT_FORMAT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/framework/tensor.h"

namespace tensorgrid {
namespace checkpoint {

// "<prefix>.index".
std::string IndexPath(const std::string& prefix);
// "<prefix>.data-<id as 16 lower-case hex digits>".
std::string DataPath(const std::string& prefix, uint64_t checkpoint_id);

// Whether `<prefix>.index` exists (the checkpoint was committed).
bool CheckpointExists(const std::string& prefix);
// Removes the index first (so the checkpoint stops existing at once), then
// every data and temporary file of the prefix. OK if nothing was there.
absl::Status DeleteCheckpoint(const std::string& prefix);

class CheckpointWriter {
 public:
  // Creates the prefix's directory if needed and opens a new data file.
  static absl::StatusOr<std::unique_ptr<CheckpointWriter>> Create(const std::string& prefix);
  // Abandons an unfinished checkpoint: its files are removed, the previous
  // checkpoint of the prefix (if any) stays.
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Appends one tensor. InvalidArgument for an empty or repeated name or a
  // dtype that cannot be saved (resource handles, references).
  absl::Status Add(const std::string& name, const Tensor& tensor);
  // Syncs the data file, writes and commits the index, then removes the
  // prefix's data files from earlier saves.
  absl::Status Finish();

  const std::string& prefix() const { return prefix_; }

 private:
  struct Entry;
  CheckpointWriter(std::string prefix, uint64_t id, int fd);
  absl::Status CheckWritable() const;
  absl::Status Append(const void* bytes, size_t n, uint32_t* crc);
  absl::Status AppendTensor(const Tensor& tensor, uint32_t* crc);
  absl::Status WriteIndex();

  const std::string prefix_;
  const uint64_t id_;
  const std::string data_path_;
  int fd_;
  uint64_t offset_ = 0;
  std::vector<Entry> entries_;
  absl::flat_hash_set<std::string> names_;
  bool finished_ = false;
  absl::Status error_;  // the first failed write; the writer is unusable after it
};

class CheckpointReader {
 public:
  struct Entry {
    std::string name;
    DataType dtype = DT_INVALID;
    TensorShape shape;
    uint64_t offset = 0;  // in the data file
    uint64_t size = 0;    // bytes
    uint32_t crc32 = 0;   // zlib's CRC-32 of those bytes
  };

  // Reads and verifies the index, and checks the data file's header and
  // size against it. NotFound when `<prefix>.index` does not exist; DataLoss
  // for a damaged index or data file.
  static absl::StatusOr<std::unique_ptr<CheckpointReader>> Open(const std::string& prefix);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  // The entry named `name`, or nullptr.
  const Entry* Find(const std::string& name) const;
  // Entries sorted by name.
  const std::vector<Entry>& entries() const { return entries_; }
  // The tensor named `name`, its bytes verified against the index's CRC.
  // NotFound naming the tensor and the checkpoint; DataLoss naming the data
  // file and the tensor.
  absl::StatusOr<Tensor> Read(const std::string& name) const;

  const std::string& prefix() const { return prefix_; }
  const std::string& data_path() const { return data_path_; }

 private:
  CheckpointReader(std::string prefix, std::string data_path, int fd, std::vector<Entry> entries);
  absl::Status ReadAt(uint64_t offset, void* out, size_t n) const;

  const std::string prefix_;
  const std::string data_path_;
  const int fd_;
  const std::vector<Entry> entries_;
};

// Points of a save where a test may stop the process to simulate a crash.
enum class SavePoint {
  kDataFilePartlyWritten,  // after the first tensor reached the data file
  kDataFileWritten,        // data file complete and synced, no index yet
  kIndexTempWritten,       // index written to its temporary name
  kIndexRenamed,           // committed; older data files not yet removed
  kAtomicTempWritten,      // WriteFileAtomically (core/platform/file.h): temporary
                           // file synced, not renamed
};
// Called at each SavePoint with the file concerned; nullptr (the default)
// turns it off. For tests only: the hook is process-wide.
using SaveHook = std::function<void(SavePoint point, const std::string& path)>;
void SetSaveHookForTesting(SaveHook hook);

}  // namespace checkpoint
}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_CHECKPOINT_FORMAT_H_
