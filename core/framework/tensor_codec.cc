#include "core/framework/tensor_codec.h"

#include <cstring>

#include "core/platform/status.h"

namespace tensorgrid {

namespace {

// Fills `out` (n elements) from a repeated proto field, repeating the last
// value when the field is shorter than n.
template <typename T, typename Field>
absl::Status FillFromField(const Field& field, int64_t n, T* out, absl::string_view field_name) {
  if (field.size() > n) {
    return errors::InvalidArgument("tensor proto has ", field.size(), " values in ", field_name,
                                   " but its shape holds ", n);
  }
  if (n > 0 && field.empty()) {
    std::fill_n(out, n, T());
    return absl::OkStatus();
  }
  int64_t i = 0;
  for (; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
  for (; i < n; ++i) out[i] = out[field.size() - 1];
  return absl::OkStatus();
}

template <typename T>
absl::Status FillHalfLike(const TensorProto& proto, int64_t n, T* out) {
  if (proto.half_val_size() > n) {
    return errors::InvalidArgument("tensor proto has ", proto.half_val_size(),
                                   " values in half_val but its shape holds ", n);
  }
  for (int64_t i = 0; i < n; ++i) {
    uint16_t bits = proto.half_val_size() == 0
                        ? 0
                        : static_cast<uint16_t>(
                              proto.half_val(std::min<int64_t>(i, proto.half_val_size() - 1)));
    std::memcpy(static_cast<void*>(&out[i]), &bits, sizeof(bits));
  }
  return absl::OkStatus();
}

absl::Status FillFromTypedFields(const TensorProto& proto, Tensor* t) {
  const int64_t n = t->NumElements();
  switch (t->dtype()) {
    case DT_FLOAT: return FillFromField(proto.float_val(), n, t->data<float>(), "float_val");
    case DT_DOUBLE: return FillFromField(proto.double_val(), n, t->data<double>(), "double_val");
    case DT_INT32: return FillFromField(proto.int_val(), n, t->data<int32_t>(), "int_val");
    case DT_INT16: return FillFromField(proto.int_val(), n, t->data<int16_t>(), "int_val");
    case DT_INT8: return FillFromField(proto.int_val(), n, t->data<int8_t>(), "int_val");
    case DT_UINT8: return FillFromField(proto.int_val(), n, t->data<uint8_t>(), "int_val");
    case DT_UINT16: return FillFromField(proto.int_val(), n, t->data<uint16_t>(), "int_val");
    case DT_INT64: return FillFromField(proto.int64_val(), n, t->data<int64_t>(), "int64_val");
    case DT_UINT32: return FillFromField(proto.uint32_val(), n, t->data<uint32_t>(), "uint32_val");
    case DT_UINT64: return FillFromField(proto.uint64_val(), n, t->data<uint64_t>(), "uint64_val");
    case DT_BOOL: return FillFromField(proto.bool_val(), n, t->data<bool>(), "bool_val");
    case DT_HALF: return FillHalfLike(proto, n, t->data<half>());
    case DT_BFLOAT16: return FillHalfLike(proto, n, t->data<bfloat16>());
    case DT_STRING: {
      std::string* out = t->data<std::string>();
      if (proto.string_val_size() > n) {
        return errors::InvalidArgument("tensor proto has ", proto.string_val_size(),
                                       " values in string_val but its shape holds ", n);
      }
      for (int64_t i = 0; i < n; ++i) {
        if (proto.string_val_size() > 0) {
          out[i] = proto.string_val(std::min<int64_t>(i, proto.string_val_size() - 1));
        }
      }
      return absl::OkStatus();
    }
    case DT_RESOURCE: {
      ResourceHandle* out = t->data<ResourceHandle>();
      if (proto.resource_handle_val_size() != n) {
        return errors::InvalidArgument("tensor proto has ", proto.resource_handle_val_size(),
                                       " resource handles but its shape holds ", n);
      }
      for (int64_t i = 0; i < n; ++i) {
        const auto& h = proto.resource_handle_val(i);
        out[i] = ResourceHandle{h.device(), h.container(), h.name(), h.maybe_type_name()};
      }
      return absl::OkStatus();
    }
    default:
      return errors::InvalidArgument("tensor proto has unsupported dtype ",
                                     DataTypeString(t->dtype()));
  }
}

}  // namespace

void CanonicalizeBools(Tensor* tensor) {
  if (!tensor->IsInitialized() || tensor->dtype() != DT_BOOL) return;
  // As bytes: loading a bool that is not 0 or 1 is itself the problem.
  uint8_t* bytes = static_cast<uint8_t*>(tensor->raw_data());
  for (int64_t i = 0; i < tensor->NumElements(); ++i) bytes[i] = bytes[i] != 0;
}

absl::StatusOr<Tensor> TensorFromProto(const TensorProto& proto) {
  const DataType dtype = proto.dtype();
  if (!DataTypeIsSupported(dtype) || IsRefType(dtype)) {
    return errors::InvalidArgument("tensor proto has unsupported dtype ", DataTypeString(dtype));
  }
  auto shape = TensorShapeFromProto(proto.tensor_shape());
  if (!shape.ok()) return WithContext(shape.status(), "tensor proto");
  TG_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, *shape));
  if (!proto.tensor_content().empty()) {
    if (DataTypeIsObject(dtype)) {
      return errors::InvalidArgument("tensor proto of type ", DataTypeString(dtype),
                                     " cannot use tensor_content");
    }
    if (proto.tensor_content().size() != t.TotalBytes()) {
      return errors::InvalidArgument("tensor proto has ", proto.tensor_content().size(),
                                     " bytes of tensor_content but ", DataTypeString(dtype), " ",
                                     shape->DebugString(), " needs ", t.TotalBytes());
    }
    std::memcpy(t.raw_data(), proto.tensor_content().data(), t.TotalBytes());
    // tensor_content "=\x01" made bool 61 (found by tensor_proto_fuzzer).
    CanonicalizeBools(&t);
    return t;
  }
  TG_RETURN_IF_ERROR(FillFromTypedFields(proto, &t));
  return t;
}

namespace {
template <typename T, typename Field>
void AppendAll(const Tensor& t, Field* field) {
  const T* p = t.data<T>();
  for (int64_t i = 0; i < t.NumElements(); ++i) field->Add(p[i]);
}
}  // namespace

void TensorToProto(const Tensor& t, TensorProto* proto, bool use_tensor_content) {
  proto->Clear();
  proto->set_dtype(t.dtype());
  t.shape().AsProto(proto->mutable_tensor_shape());
  const int64_t n = t.NumElements();
  switch (t.dtype()) {
    case DT_STRING:
      for (int64_t i = 0; i < n; ++i) proto->add_string_val(t.data<std::string>()[i]);
      return;
    case DT_RESOURCE:
      for (int64_t i = 0; i < n; ++i) {
        const ResourceHandle& h = t.data<ResourceHandle>()[i];
        auto* p = proto->add_resource_handle_val();
        p->set_device(h.device);
        p->set_container(h.container);
        p->set_name(h.name);
        p->set_maybe_type_name(h.type_name);
      }
      return;
    default: break;
  }
  if (use_tensor_content) {
    proto->set_tensor_content(static_cast<const char*>(t.raw_data()), t.TotalBytes());
    return;
  }
  switch (t.dtype()) {
    case DT_FLOAT: AppendAll<float>(t, proto->mutable_float_val()); break;
    case DT_DOUBLE: AppendAll<double>(t, proto->mutable_double_val()); break;
    case DT_INT32: AppendAll<int32_t>(t, proto->mutable_int_val()); break;
    case DT_INT16: AppendAll<int16_t>(t, proto->mutable_int_val()); break;
    case DT_INT8: AppendAll<int8_t>(t, proto->mutable_int_val()); break;
    case DT_UINT8: AppendAll<uint8_t>(t, proto->mutable_int_val()); break;
    case DT_UINT16: AppendAll<uint16_t>(t, proto->mutable_int_val()); break;
    case DT_INT64: AppendAll<int64_t>(t, proto->mutable_int64_val()); break;
    case DT_UINT32: AppendAll<uint32_t>(t, proto->mutable_uint32_val()); break;
    case DT_UINT64: AppendAll<uint64_t>(t, proto->mutable_uint64_val()); break;
    case DT_BOOL: AppendAll<bool>(t, proto->mutable_bool_val()); break;
    case DT_HALF:
    case DT_BFLOAT16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t bits;
        std::memcpy(&bits, static_cast<const char*>(t.raw_data()) + 2 * i, 2);
        proto->add_half_val(bits);
      }
      break;
    default: break;
  }
}

}  // namespace tensorgrid
