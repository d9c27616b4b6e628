// TensorProto decoding (core/framework/tensor_codec.h), what every feed, fetch
// and constant that crosses the wire goes through: bytes that parse as a
// TensorProto either decode into a tensor or are refused with
// InvalidArgument (or ResourceExhausted past the tensor size limit); a
// decoded tensor encodes both ways (tensor_content and the typed fields) and
// decodes again to the same tensor.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/framework/tensor_codec.h"
#include "proto/tensor.pb.h"
#include "tests/fuzz/fuzz_util.h"

namespace tensorgrid {
namespace {

bool SameTensor(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == DT_STRING) {
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      if (a.data<std::string>()[i] != b.data<std::string>()[i]) return false;
    }
    return true;
  }
  if (a.dtype() == DT_RESOURCE) {
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      const ResourceHandle& x = a.data<ResourceHandle>()[i];
      const ResourceHandle& y = b.data<ResourceHandle>()[i];
      if (x.device != y.device || x.container != y.container || x.name != y.name ||
          x.type_name != y.type_name) {
        return false;
      }
    }
    return true;
  }
  return std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0;
}

void FuzzTensorProto(const TensorProto& proto) {
  absl::StatusOr<Tensor> tensor = TensorFromProto(proto);
  if (!tensor.ok()) {
    fuzz::ExpectError(tensor.status(),
                      {absl::StatusCode::kInvalidArgument, absl::StatusCode::kResourceExhausted},
                      "TensorFromProto");
    return;
  }
  for (const bool use_tensor_content : {true, false}) {
    TensorProto encoded;
    TensorToProto(*tensor, &encoded, use_tensor_content);
    absl::StatusOr<Tensor> again = TensorFromProto(encoded);
    if (!again.ok()) {
      fuzz::Fail(absl::StrCat("a decoded tensor does not decode again: ", again.status().ToString()));
    }
    if (!SameTensor(*tensor, *again)) {
      fuzz::Fail(absl::StrCat("round trip changed the tensor (tensor_content: ", use_tensor_content,
                              "): ", tensor->DebugString(), " became ", again->DebugString()));
    }
  }
}

}  // namespace
}  // namespace tensorgrid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensorgrid::fuzz::Init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensorgrid::TensorProto proto;
  if (proto.ParseFromArray(data, static_cast<int>(size))) tensorgrid::FuzzTensorProto(proto);
  return 0;
}
