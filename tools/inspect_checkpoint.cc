// ListCheckpoint and PrintCheckpointTensor (inspect_checkpoint.h).
#include "tools/inspect_checkpoint.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/platform/status.h"
#include "core/util/tensor_bundle.h"

namespace tensorgrid {
namespace tg_inspect {

absl::StatusOr<std::string> ListCheckpoint(const std::string& prefix) {
  TG_ASSIGN_OR_RETURN(auto reader, checkpoint::CheckpointReader::Open(prefix));
  std::vector<std::vector<std::string>> rows = {{"name", "dtype", "shape", "bytes"}};
  for (const checkpoint::CheckpointReader::Entry& e : reader->entries()) {
    std::string bytes = absl::StrCat(e.size);
    if (!e.slices.empty()) {
      bytes = absl::StrCat(e.slices.size(), " slices");
    }
    rows.push_back({e.name, DataTypeString(e.dtype), e.shape.DebugString(), bytes});
  }
  std::vector<size_t> width(4, 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    absl::StrAppendFormat(&out, "%-*s  %-*s  %-*s  %s\n", static_cast<int>(width[0]), row[0],
                          static_cast<int>(width[1]), row[1], static_cast<int>(width[2]), row[2],
                          row[3]);
  }
  absl::StrAppend(&out, reader->entries().size(), " tensors in ", reader->num_shards(),
                  " data shard(s)", reader->is_legacy() ? ", tensorgrid's pre-TensorFlow format" : "",
                  "\n");
  return out;
}

absl::StatusOr<std::string> PrintCheckpointTensor(const std::string& prefix,
                                                  const std::string& name, int max_values) {
  TG_ASSIGN_OR_RETURN(auto reader, checkpoint::CheckpointReader::Open(prefix));
  TG_ASSIGN_OR_RETURN(Tensor t, reader->Read(name));
  std::string out = absl::StrCat(name, " (", DataTypeString(t.dtype()), " ",
                                 t.shape().DebugString(), ")\n", t.SummarizeValue(max_values));
  if (t.NumElements() > max_values) {
    absl::StrAppend(&out, "\n(first ", max_values, " of ", t.NumElements(), " values)");
  }
  return out + "\n";
}

}  // namespace tg_inspect
}  // namespace tensorgrid
