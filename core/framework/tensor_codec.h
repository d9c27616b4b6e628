// Conversion between Tensor and TensorProto (TensorFlow's wire form).
//
// Decoding accepts both `tensor_content` (raw little-endian bytes) and the
// typed `*_val` fields, including TensorFlow's broadcast rule: a `*_val` field
// with fewer values than elements repeats its last value (so `float_val: 1.0`
// fills any shape). Inconsistent protos are InvalidArgument, never a crash.
#ifndef TENSORGRID_CORE_FRAMEWORK_TENSOR_CODEC_H_
#define TENSORGRID_CORE_FRAMEWORK_TENSOR_CODEC_H_

#include "absl/status/statusor.h"
#include "core/framework/tensor.h"
#include "proto/tensor.pb.h"

namespace tensorgrid {

absl::StatusOr<Tensor> TensorFromProto(const TensorProto& proto);

// Writes `tensor`. With `use_tensor_content` (the default) numeric values go
// into `tensor_content`; otherwise into the typed `*_val` field.
void TensorToProto(const Tensor& tensor, TensorProto* proto, bool use_tensor_content = true);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_TENSOR_CODEC_H_
