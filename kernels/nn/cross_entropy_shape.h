// The checks the softmax cross-entropy kernels share (CPU and GPU), with
// TensorFlow's wording.
#ifndef TENSORGRID_KERNELS_NN_CROSS_ENTROPY_SHAPE_H_
#define TENSORGRID_KERNELS_NN_CROSS_ENTROPY_SHAPE_H_

#include <cstdint>
#include <utility>

#include "absl/status/statusor.h"
#include "core/framework/tensor_shape.h"

namespace tensorgrid {

// SoftmaxCrossEntropyWithLogits: {batch, classes}, the broadcast of 2-D
// logits and labels (each dimension equal, or 1 against the other's);
// InvalidArgument naming both shapes otherwise.
absl::StatusOr<std::pair<int64_t, int64_t>> SoftmaxXentDims(const TensorShape& logits,
                                                            const TensorShape& labels);

// SparseSoftmaxCrossEntropyWithLogits: 2-D logits, 1-D labels of the same
// first dimension, at least one class unless the batch is empty.
absl::Status CheckSparseXentShapes(const TensorShape& logits, const TensorShape& labels);

// The error for labels[row] == label outside [0, classes).
absl::Status LabelOutOfRange(int64_t label, int64_t row, const TensorShape& logits);

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_NN_CROSS_ENTROPY_SHAPE_H_
