#include "client/output.h"

#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"

namespace tensorgrid {

Output Operation::output(int i) const { return Output(*this, i); }

std::string Output::name() const { return absl::StrCat(node_name(), ":", index_); }

size_t OutputHash::operator()(const Output& output) const {
  return std::hash<std::string>()(output.node_name()) * 31 + std::hash<int>()(output.index());
}

namespace {

// Copies `src`'s elements to `dst` starting at element `offset`; both of one dtype.
void CopyElements(const Tensor& src, Tensor* dst, int64_t offset) {
  if (src.dtype() == DT_STRING) {
    const std::string* from = src.data<std::string>();
    std::string* to = dst->data<std::string>() + offset;
    for (int64_t i = 0; i < src.NumElements(); ++i) to[i] = from[i];
    return;
  }
  const size_t elem = static_cast<size_t>(DataTypeSize(src.dtype()));
  std::memcpy(static_cast<char*>(dst->raw_data()) + offset * elem, src.raw_data(),
              src.NumElements() * elem);
}

}  // namespace

Input::Initializer::Initializer(const std::initializer_list<Initializer>& v) {
  if (v.size() == 0) {
    status = absl::InvalidArgumentError("an empty nested list has no dtype; pass a Tensor");
    return;
  }
  const Initializer& first = *v.begin();
  for (const Initializer& part : v) {
    if (!part.status.ok()) {
      status = part.status;
      return;
    }
    if (part.tensor.dtype() != first.tensor.dtype()) {
      status = absl::InvalidArgumentError(
          absl::StrCat("nested constant mixes ", DataTypeString(first.tensor.dtype()), " and ",
                       DataTypeString(part.tensor.dtype()), " values"));
      return;
    }
    if (part.tensor.shape() != first.tensor.shape()) {
      status = absl::InvalidArgumentError(absl::StrCat("nested constant is ragged: rows of shape ",
                                                       first.tensor.shape().DebugString(), " and ",
                                                       part.tensor.shape().DebugString()));
      return;
    }
  }
  TensorShape shape = first.tensor.shape();
  shape.InsertDim(0, static_cast<int64_t>(v.size()));
  tensor = Tensor(first.tensor.dtype(), shape);
  int64_t offset = 0;
  for (const Initializer& part : v) {
    CopyElements(part.tensor, &tensor, offset);
    offset += part.tensor.NumElements();
  }
}

}  // namespace tensorgrid
