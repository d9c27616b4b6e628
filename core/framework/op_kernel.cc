#include "core/framework/op_kernel.h"

#include "absl/strings/str_join.h"
#include "core/platform/blocking.h"
#include "core/platform/status.h"

namespace tensorgrid {

OpKernel::OpKernel(OpKernelConstruction& ctx)
    : def_(ctx.def()), input_types_(ctx.input_types()), output_types_(ctx.output_types()) {}

absl::Status AsyncOpKernel::Compute(OpKernelContext& ctx) {
  return WaitForCallback([&](StatusCallback done) { ComputeAsync(ctx, std::move(done)); });
}

OpKernelContext::OpKernelContext(const Params& params)
    : params_(params), outputs_(params.kernel->num_outputs()) {}

absl::Status OpKernelContext::allocate_output(int i, const TensorShape& shape, Tensor** out) {
  TG_ASSIGN_OR_RETURN(outputs_[i].tensor,
                      Tensor::Allocate(RemoveRefType(params_.kernel->output_type(i)), shape));
  *out = &outputs_[i].tensor;
  return absl::OkStatus();
}

absl::Status OpKernelContext::forward_input_or_allocate_output(int in, int out,
                                                               const TensorShape& shape,
                                                               Tensor** result) {
  TensorValue& v = params_.inputs[in];
  if (v.ref == nullptr && v.tensor.RefCountIsOne() &&
      v.tensor.dtype() == RemoveRefType(params_.kernel->output_type(out)) &&
      v.tensor.NumElements() == shape.num_elements() && !DataTypeIsObject(v.tensor.dtype())) {
    outputs_[out].tensor = v.tensor.Reshaped(shape);
    *result = &outputs_[out].tensor;
    return absl::OkStatus();
  }
  return allocate_output(out, shape, result);
}

KernelRegistry* KernelRegistry::Global() {
  static KernelRegistry* registry = new KernelRegistry();
  return registry;
}

void KernelRegistry::Register(const KernelDefBuilder& def, KernelFactory factory) {
  absl::MutexLock lock(&mu_);
  kernels_[def.op_].push_back(Registration{def, std::move(factory)});
}

const KernelRegistry::Registration* KernelRegistry::Find(const NodeDef& node,
                                                         absl::string_view device_type) const {
  absl::MutexLock lock(&mu_);
  auto it = kernels_.find(node.op());
  if (it == kernels_.end()) return nullptr;
  for (const Registration& r : it->second) {
    if (r.def.device_type_ != device_type) continue;
    bool match = true;
    for (const auto& [attr, allowed] : r.def.constraints_) {
      DataType t;
      if (!GetNodeAttr(node, attr, &t).ok() ||
          std::find(allowed.begin(), allowed.end(), t) == allowed.end()) {
        match = false;
        break;
      }
    }
    if (match) return &r;
  }
  return nullptr;
}

bool KernelRegistry::HasKernel(const NodeDef& node, absl::string_view device_type) const {
  return Find(node, device_type) != nullptr;
}

absl::StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(Device* device,
                                                                       const NodeDef& node,
                                                                       const OpDef& op_def) const {
  const Registration* r = Find(node, device->device_type());
  if (r == nullptr) {
    std::vector<std::string> attrs;
    for (const auto& [name, value] : node.attr()) {
      if (value.value_case() == AttrValue::kType) {
        attrs.push_back(absl::StrCat(name, "=", DataTypeString(value.type())));
      }
    }
    std::sort(attrs.begin(), attrs.end());
    return errors::Unimplemented(
        "no ", device->device_type(), " kernel for op '", node.op(), "' (node '", node.name(), "'",
        attrs.empty() ? "" : absl::StrCat(", ", absl::StrJoin(attrs, ", ")), ")");
  }
  std::vector<DataType> inputs, outputs;
  TG_RETURN_IF_ERROR(InOutTypesForNode(node, op_def, &inputs, &outputs));
  OpKernelConstruction ctx(device, node, op_def, std::move(inputs), std::move(outputs));
  std::unique_ptr<OpKernel> kernel = r->factory(ctx);
  if (!ctx.status().ok()) {
    return WithContext(ctx.status(), absl::StrCat("node '", node.name(), "' (", node.op(), ")"));
  }
  return kernel;
}

}  // namespace tensorgrid
