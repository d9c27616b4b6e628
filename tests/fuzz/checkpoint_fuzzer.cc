// Reading a checkpoint (core/util/tensor_bundle.h), as Saver's restore
// and RestoreV2 do: CheckpointReader::Open on a prefix whose index and data
// file hold the input, then every tensor read whole and as its first half.
// A damaged checkpoint is DataLoss (FailedPrecondition or Unimplemented for
// a bundle this build does not read), never a crash or an allocation larger
// than the data file.
//
// Input: byte 0 (bit 0: for a legacy index, recompute its checksum so the
// fuzzer gets past it), a 4-byte length, that many bytes of index, then the
// data file. The data file is written as shard 0 of 1 and of 2 (a bundle's
// names), and, for a legacy index, under the name its checkpoint id (bytes
// 16-23) gives it.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "core/util/legacy_checkpoint.h"
#include "core/util/tensor_bundle.h"
#include "tests/fuzz/fuzz_util.h"

namespace tensorgrid {
namespace {

uint64_t GetU64(const std::string& bytes, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(bytes[at + i])} << (8 * i);
  return v;
}

// Sets the index's last four bytes to the CRC-32 of all before them.
void FixChecksum(std::string* index) {
  if (index->size() < 4) return;
  const size_t body = index->size() - 4;
  const uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(index->data()), static_cast<uInt>(body)));
  for (int i = 0; i < 4; ++i) (*index)[body + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
}

void FuzzCheckpoint(std::string index, const std::string& data, bool fix_checksum) {
  const std::string prefix = fuzz::TempDir() + "/model";
  if (fix_checksum) FixChecksum(&index);
  const uint64_t id = index.size() >= 24 ? GetU64(index, 16) : 0;
  const std::vector<std::string> data_paths = {checkpoint::LegacyDataPath(prefix, id),
                                               checkpoint::DataPath(prefix, 0, 1),
                                               checkpoint::DataPath(prefix, 0, 2)};
  fuzz::WriteFileOrDie(checkpoint::IndexPath(prefix), index);
  for (const std::string& path : data_paths) fuzz::WriteFileOrDie(path, data);
  {
    absl::StatusOr<std::unique_ptr<checkpoint::CheckpointReader>> reader =
        checkpoint::CheckpointReader::Open(prefix);
    if (!reader.ok()) {
      fuzz::ExpectError(reader.status(),
                        {absl::StatusCode::kDataLoss, absl::StatusCode::kFailedPrecondition,
                         absl::StatusCode::kUnimplemented},
                        "CheckpointReader::Open");
    } else {
      const std::string* previous = nullptr;
      for (const auto& entry : (*reader)->entries()) {
        if (previous != nullptr && !(*previous < entry.name)) fuzz::Fail("entries out of order");
        previous = &entry.name;
        if ((*reader)->Find(entry.name) != &entry) fuzz::Fail("Find misses an entry");
        absl::StatusOr<Tensor> tensor = (*reader)->Read(entry.name);
        const std::initializer_list<absl::StatusCode> read_errors = {
            absl::StatusCode::kDataLoss, absl::StatusCode::kResourceExhausted,
            absl::StatusCode::kUnimplemented, absl::StatusCode::kInvalidArgument};
        if (!tensor.ok()) {
          fuzz::ExpectError(tensor.status(), read_errors, "CheckpointReader::Read");
        } else if (tensor->dtype() != entry.dtype || tensor->shape() != entry.shape) {
          fuzz::Fail("a tensor read is not what its entry says");
        }
        if (entry.shape.dims() == 0 || entry.shape.dim_size(0) < 2) continue;
        TensorSliceProto half;
        half.add_extent()->set_length(entry.shape.dim_size(0) / 2);
        for (int d = 1; d < entry.shape.dims(); ++d) half.add_extent();
        absl::StatusOr<Tensor> part =
            (*reader)->Read(entry.name, *checkpoint::TensorSlice::FromProto(half));
        if (!part.ok()) fuzz::ExpectError(part.status(), read_errors, "CheckpointReader::Read");
      }
    }
  }
  for (const std::string& path : data_paths) unlink(path.c_str());
}

}  // namespace
}  // namespace tensorgrid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensorgrid::fuzz::Init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensorgrid;
  fuzz::Input in(data, size);
  const bool fix_checksum = (in.Byte() & 1) != 0;
  std::string index = in.Bytes(in.U32());
  FuzzCheckpoint(std::move(index), in.Rest(), fix_checksum);
  return 0;
}
