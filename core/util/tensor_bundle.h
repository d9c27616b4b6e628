// Checkpoints in TensorFlow's V2 format, the "tensor bundle"
// (docs/checkpoints.md has the layout): a checkpoint `prefix` is
//
//   <prefix>.index                    a LevelDB-format table: "" -> the
//                                     BundleHeaderProto, each tensor name ->
//                                     its BundleEntryProto (dtype, shape,
//                                     shard, offset, size, masked CRC-32C);
//                                     written last, to a temporary name
//                                     renamed into place (the commit point)
//   <prefix>.data-00000-of-00001      the tensors' bytes, as TensorFlow lays
//                                     them out (or -of-00002: see below)
//
//   TG_ASSIGN_OR_RETURN(auto writer, CheckpointWriter::Create("/ckpt/model-10"));
//   TG_RETURN_IF_ERROR(writer->Add("w", w));
//   TG_RETURN_IF_ERROR(writer->Finish());
//
//   TG_ASSIGN_OR_RETURN(auto reader, CheckpointReader::Open("/ckpt/model-10"));
//   TG_ASSIGN_OR_RETURN(Tensor w, reader->Read("w"));
//
// Checkpoints TensorFlow wrote read here, and TensorFlow reads ours.
// Guarantees: a checkpoint appears complete or not at all. A save never
// writes a data file the committed index names: when the committed index of
// the prefix has one shard, the new checkpoint has two (`data-00000-of-00002`
// holds the tensors, `data-00001-of-00002` is empty), otherwise one. Its data
// files are synced before the index is renamed over `<prefix>.index`, so a
// crash at any point leaves the previous checkpoint of that prefix or the new
// one, never a mix. Damaged or truncated files are DataLoss naming the file
// and, where one is affected, the tensor; a missing checkpoint or tensor is
// NotFound naming it. Checkpoints in tensorgrid's earlier format
// (legacy_checkpoint.h) still read.
//
// Thread safety: a CheckpointWriter is used by one thread; a CheckpointReader
// may be read from many threads at once. One writer per prefix at a time.
#ifndef TENSORGRID_CORE_UTIL_TENSOR_BUNDLE_H_
#define TENSORGRID_CORE_UTIL_TENSOR_BUNDLE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/framework/tensor.h"
#include "core/util/tensor_slice.h"
#include "proto/tensor_bundle.pb.h"

namespace tensorgrid {
namespace checkpoint {

class LegacyReader;

// The bundle format version this build writes (VersionDef.producer) and
// reads (the consumer checked against min_consumer and bad_consumers).
inline constexpr int kTensorBundleVersion = 1;

// "<prefix>.index".
std::string IndexPath(const std::string& prefix);
// "<prefix>.data-<shard, 5 digits>-of-<num_shards, 5 digits>".
std::string DataPath(const std::string& prefix, int shard, int num_shards);

// Whether `<prefix>.index` exists (the checkpoint was committed).
bool CheckpointExists(const std::string& prefix);
// Removes the index first (so the checkpoint stops existing at once), then
// every data and temporary file of the prefix. OK if nothing was there.
absl::Status DeleteCheckpoint(const std::string& prefix);

class CheckpointWriter {
 public:
  // Creates the prefix's directory if needed and opens a new data file (one
  // shard, or two when the committed checkpoint of `prefix` has one).
  static absl::StatusOr<std::unique_ptr<CheckpointWriter>> Create(const std::string& prefix);
  // Abandons an unfinished checkpoint: its files are removed, the previous
  // checkpoint of the prefix (if any) stays.
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Appends one tensor. InvalidArgument for an empty or repeated name or a
  // dtype that cannot be saved (resource handles, references).
  absl::Status Add(const std::string& name, const Tensor& tensor);
  // Appends `slice` of tensor `name` (of shape `full_shape`), held by
  // `piece`; TensorFlow's layout: the entry `name` lists its slices, each
  // piece is stored under EncodeTensorNameSlice(name, slice). A full slice is
  // Add. InvalidArgument for a slice that does not fit `full_shape`, a piece
  // not shaped like it, a dtype or shape other than earlier slices', or a
  // slice that overlaps one added before.
  absl::Status AddSlice(const std::string& name, const TensorShape& full_shape,
                        const TensorSlice& slice, const Tensor& piece);
  // Syncs the data files, writes and commits the index, then removes the
  // prefix's data files of other saves and stale temporary files.
  absl::Status Finish();

  const std::string& prefix() const { return prefix_; }
  int num_shards() const { return num_shards_; }

 private:
  CheckpointWriter(std::string prefix, int num_shards, int fd);
  absl::Status CheckWritable() const;
  absl::Status Append(const void* bytes, size_t n, uint32_t* crc);
  absl::Status AppendTensor(const Tensor& tensor, uint32_t* crc);
  absl::Status WriteIndex();

  const std::string prefix_;
  const int num_shards_;
  const std::string data_path_;  // shard 0
  int fd_;
  uint64_t offset_ = 0;
  std::map<std::string, BundleEntryProto> entries_;  // by key, bytewise
  bool finished_ = false;
  absl::Status error_;  // the first failed write; the writer is unusable after it
  std::vector<char> copy_;  // what Append checksums and writes
};

class CheckpointReader {
 public:
  struct Entry {
    std::string name;
    DataType dtype = DT_INVALID;
    TensorShape shape;
    int shard_id = 0;
    uint64_t offset = 0;  // in the shard's data file
    uint64_t size = 0;    // bytes
    uint32_t crc32c = 0;  // masked CRC-32C of those bytes, as stored
    // Non-empty: the tensor is stored in these slices (the entry itself has
    // no bytes); Read assembles them.
    std::vector<TensorSlice> slices;
  };

  // Reads and checks the index (header and every entry) and the data files'
  // sizes against it. NotFound when `<prefix>.index` does not exist;
  // DataLoss for a damaged index or a missing or short data file;
  // Unimplemented for a big-endian bundle; FailedPrecondition for one that
  // needs a newer reader.
  static absl::StatusOr<std::unique_ptr<CheckpointReader>> Open(const std::string& prefix);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  // The entry named `name`, or nullptr.
  const Entry* Find(const std::string& name) const;
  // Entries sorted by name (tensors, not the pieces of sliced ones).
  const std::vector<Entry>& entries() const { return entries_; }
  // The tensor named `name`, its bytes verified against the index's CRC.
  // NotFound naming the tensor and the checkpoint; DataLoss naming the data
  // file and the tensor; Unimplemented for a dtype tensorgrid lacks.
  absl::StatusOr<Tensor> Read(const std::string& name) const;
  // Slice `slice` of tensor `name`, from the whole stored tensor or from the
  // stored slices that cover it. InvalidArgument when `slice` does not fit
  // the tensor's shape or the stored slices do not cover it.
  absl::StatusOr<Tensor> Read(const std::string& name, const TensorSlice& slice) const;

  const std::string& prefix() const { return prefix_; }
  int num_shards() const { return num_shards_; }
  // The data file of `shard`.
  std::string data_path(int shard = 0) const;
  // Whether the checkpoint is in tensorgrid's earlier format.
  bool is_legacy() const { return legacy_ != nullptr; }

 private:
  CheckpointReader(std::string prefix, int num_shards);
  absl::Status OpenDataFiles();
  absl::StatusOr<Tensor> ReadWhole(const Entry& e) const;
  absl::StatusOr<Tensor> ReadSliced(const Entry& e, const TensorSlice& slice) const;
  absl::Status ReadAt(int shard, uint64_t offset, void* out, size_t n) const;

  const std::string prefix_;
  const int num_shards_;
  std::vector<Entry> entries_;
  std::map<std::string, Entry> pieces_;  // slices of sliced tensors, by table key
  std::map<int, int> fds_;               // shard -> open data file, for shards in use
  std::unique_ptr<LegacyReader> legacy_;
};

// Merges the checkpoints `sources` into one at `destination` (one data
// shard, written like any save), then deletes the sources' files.
// InvalidArgument when two sources hold the same tensor (slices of one
// tensor merge). With `allow_missing_files`, sources without an index are
// skipped (NotFound if none is left); without, they are NotFound.
absl::Status MergeCheckpoints(const std::vector<std::string>& sources,
                              const std::string& destination, bool allow_missing_files);

// Points of a save where a test may stop the process to simulate a crash.
enum class SavePoint {
  kDataFilePartlyWritten,  // after the first tensor reached the data file
  kDataFileWritten,        // data files complete and synced, no index yet
  kIndexTempWritten,       // index written to its temporary name
  kIndexRenamed,           // committed; other data files not yet removed
  kAtomicTempWritten,      // WriteFileAtomically (core/platform/file.h): temporary
                           // file synced, not renamed
};
// Called at each SavePoint with the file concerned; nullptr (the default)
// turns it off. For tests only: the hook is process-wide.
using SaveHook = std::function<void(SavePoint point, const std::string& path)>;
void SetSaveHookForTesting(SaveHook hook);

}  // namespace checkpoint
}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_TENSOR_BUNDLE_H_
