#include "core/framework/shape_inference.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/status.h"

namespace tensorgrid {

std::optional<Tensor> InferenceConstant(const NodeDef& producer, int port) {
  if (producer.op() != "Const" || port != 0) return std::nullopt;
  auto it = producer.attr().find("value");
  if (it == producer.attr().end() || !it->second.has_tensor()) return std::nullopt;
  const TensorProto& proto = it->second.tensor();
  if (proto.dtype() != DT_INT32 && proto.dtype() != DT_INT64) return std::nullopt;
  int64_t elements = 1;
  for (const auto& dim : proto.tensor_shape().dim()) {
    if (dim.size() < 0 || dim.size() > kMaxInferenceConstant) return std::nullopt;
    elements *= dim.size();
    if (elements > kMaxInferenceConstant) return std::nullopt;
  }
  absl::StatusOr<Tensor> value = TensorFromProto(proto);
  if (!value.ok()) return std::nullopt;
  return *std::move(value);
}

namespace shape_fns {

absl::Status AtNode(const ShapeInferenceContext& c, const absl::Status& status) {
  return WithContext(status, absl::StrCat("node '", c.node().name(), "' (", c.node().op(), ")"));
}

absl::Status CheckAxis(const ShapeInferenceContext& c, int64_t axis, int rank, int* normalized) {
  if (axis < -rank || axis >= rank) {
    return AtNode(c, errors::InvalidArgument("axis ", axis, " is out of range [", -rank, ", ", rank,
                                             ") for an input of rank ", rank));
  }
  *normalized = static_cast<int>(axis < 0 ? axis + rank : axis);
  return absl::OkStatus();
}

bool InputInts(const ShapeInferenceContext& c, int i, std::vector<int64_t>* values) {
  const Tensor* t = c.input_tensor(i);
  if (t == nullptr) return false;
  values->clear();
  if (t->dtype() == DT_INT32) {
    values->assign(t->data<int32_t>(), t->data<int32_t>() + t->NumElements());
  } else if (t->dtype() == DT_INT64) {
    values->assign(t->data<int64_t>(), t->data<int64_t>() + t->NumElements());
  } else {
    return false;
  }
  return true;
}

absl::Status ShapeFromShapeInput(const ShapeInferenceContext& c, int i, PartialTensorShape* shape) {
  std::vector<int64_t> dims;
  if (InputInts(c, i, &dims)) {
    for (int64_t d : dims) {
      if (d < -1) {
        return AtNode(c, errors::InvalidArgument("the shape [", absl::StrJoin(dims, ","),
                                                 "] has a negative dimension"));
      }
    }
    *shape = PartialTensorShape(dims);
    return absl::OkStatus();
  }
  const PartialTensorShape& sizes = c.input(i);
  *shape = sizes.dims() == 1 && sizes.dim_size(0) >= 0
               ? PartialTensorShape(std::vector<int64_t>(sizes.dim_size(0), -1))
               : PartialTensorShape();
  return absl::OkStatus();
}

bool MergeShapes(const PartialTensorShape& a, const PartialTensorShape& b,
                 PartialTensorShape* merged) {
  if (a.unknown_rank() || b.unknown_rank()) {
    *merged = a.unknown_rank() ? b : a;
    return true;
  }
  if (a.dims() != b.dims()) return false;
  std::vector<int64_t> dims(a.dims());
  for (int i = 0; i < a.dims(); ++i) {
    const int64_t da = a.dim_size(i), db = b.dim_size(i);
    if (da >= 0 && db >= 0 && da != db) return false;
    dims[i] = da >= 0 ? da : db;
  }
  *merged = PartialTensorShape(dims);
  return true;
}

absl::Status UnchangedShape(ShapeInferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, c.input(0));
  return absl::OkStatus();
}

absl::Status ScalarShape(ShapeInferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, PartialTensorShape({}));
  return absl::OkStatus();
}

absl::Status BroadcastBinary(ShapeInferenceContext& c) {
  const PartialTensorShape& a = c.input(0);
  const PartialTensorShape& b = c.input(1);
  if (a.unknown_rank() || b.unknown_rank()) return absl::OkStatus();
  int rank = std::max(a.dims(), b.dims());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    int ia = a.dims() - rank + i, ib = b.dims() - rank + i;
    int64_t da = ia >= 0 ? a.dim_size(ia) : 1;
    int64_t db = ib >= 0 ? b.dim_size(ib) : 1;
    if (da == 1) {
      dims[i] = db;
    } else if (db == 1 || da == db) {
      dims[i] = da;
    } else if (da < 0 || db < 0) {
      dims[i] = da < 0 ? db : da;
    } else {
      return errors::InvalidArgument("node '", c.node().name(), "' (", c.node().op(),
                                     "): incompatible shapes ", a.DebugString(), " and ",
                                     b.DebugString());
    }
  }
  c.set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status ShapeFromAttr(ShapeInferenceContext& c) {
  if (HasNodeAttr(c.node(), "shape")) {
    PartialTensorShape s;
    TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "shape", &s));
    c.set_output(0, s);
  } else if (HasNodeAttr(c.node(), "value")) {
    Tensor t;
    TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "value", &t));
    c.set_output(0, PartialTensorShape(t.shape().dim_sizes()));
  }
  return absl::OkStatus();
}

absl::Status MatMul(ShapeInferenceContext& c) {
  bool ta = false, tb = false;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "transpose_a", &ta));
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "transpose_b", &tb));
  const PartialTensorShape& a = c.input(0);
  const PartialTensorShape& b = c.input(1);
  if (a.unknown_rank() || b.unknown_rank()) return absl::OkStatus();
  if (a.dims() != 2 || b.dims() != 2) {
    return errors::InvalidArgument("node '", c.node().name(),
                                   "' (MatMul): inputs must be matrices, got ", a.DebugString(),
                                   " and ", b.DebugString());
  }
  int64_t k1 = a.dim_size(ta ? 0 : 1), k2 = b.dim_size(tb ? 1 : 0);
  if (k1 >= 0 && k2 >= 0 && k1 != k2) {
    return errors::InvalidArgument("node '", c.node().name(),
                                   "' (MatMul): inner dimensions differ: ", a.DebugString(), " x ",
                                   b.DebugString());
  }
  c.set_output(0, PartialTensorShape({a.dim_size(ta ? 1 : 0), b.dim_size(tb ? 0 : 1)}));
  return absl::OkStatus();
}

}  // namespace shape_fns
}  // namespace tensorgrid
