// tg_inspect --checkpoint: what a checkpoint holds, in the manner of
// TensorFlow's inspect_checkpoint tool.
//
//   TG_ASSIGN_OR_RETURN(std::string listing, ListCheckpoint("/ckpt/model-300"));
//   // name      dtype  shape     bytes
//   // layer1/w  float  [784,10]  31360
//   TG_ASSIGN_OR_RETURN(std::string w, PrintCheckpointTensor("/ckpt/model-300", "layer1/w"));
#ifndef TENSORGRID_TOOLS_INSPECT_CHECKPOINT_H_
#define TENSORGRID_TOOLS_INSPECT_CHECKPOINT_H_

#include <string>

#include "absl/status/statusor.h"

namespace tensorgrid {
namespace tg_inspect {

// Every tensor of the checkpoint, sorted by name: name, dtype, shape and
// bytes in the data file (a tensor stored in slices says so). The reader's
// error (NotFound, DataLoss naming the file) when it does not open.
absl::StatusOr<std::string> ListCheckpoint(const std::string& prefix);

// One tensor: a line with its name, dtype and shape, then its values, the
// first `max_values` of them for a bigger tensor ("..." marks the cut).
absl::StatusOr<std::string> PrintCheckpointTensor(const std::string& prefix,
                                                  const std::string& name, int max_values = 100);

}  // namespace tg_inspect
}  // namespace tensorgrid

#endif  // TENSORGRID_TOOLS_INSPECT_CHECKPOINT_H_
