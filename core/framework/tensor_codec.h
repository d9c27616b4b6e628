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

// A tensor filled with outside bytes as they are (tensor_content, a bulk
// answer, a checkpoint's data) may hold a bool that is neither 0 nor 1, and
// reading such a bool is undefined behaviour in C++ (a kernel may compute
// !b as b ^ 1). Makes every nonzero byte of a DT_BOOL tensor 1: nonzero is
// true, as protobuf reads bool_val. Other dtypes are left alone.
void CanonicalizeBools(Tensor* tensor);

// Writes `tensor`. With `use_tensor_content` (the default) numeric values go
// into `tensor_content`; otherwise into the typed `*_val` field.
void TensorToProto(const Tensor& tensor, TensorProto* proto, bool use_tensor_content = true);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_TENSOR_CODEC_H_
