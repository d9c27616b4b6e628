#include "core/framework/op_kernel.h"

#include "absl/strings/str_join.h"
#include "core/platform/blocking.h"
#include "core/platform/status.h"

namespace tensorgrid {

OpKernel::OpKernel(OpKernelConstruction& ctx)
    : def_(ctx.def()),
      input_types_(ctx.input_types()),
      output_types_(ctx.output_types()),
      input_memory_types_(ctx.input_memory_types()),
      output_memory_types_(ctx.output_memory_types()) {}

absl::Status AsyncOpKernel::Compute(OpKernelContext& ctx) {
  return WaitForCallback([&](StatusCallback done) { ComputeAsync(ctx, std::move(done)); });
}

OpKernelContext::OpKernelContext(const Params& params)
    : params_(params), outputs_(params.kernel->num_outputs()) {}

absl::Status OpKernelContext::allocate_output(int i, const TensorShape& shape, Tensor** out) {
  TG_ASSIGN_OR_RETURN(
      outputs_[i].tensor,
      Tensor::Allocate(params_.device->GetAllocator(params_.kernel->output_memory_type(i)),
                       RemoveRefType(params_.kernel->output_type(i)), shape));
  *out = &outputs_[i].tensor;
  return absl::OkStatus();
}

absl::Status OpKernelContext::forward_input_or_allocate_output(int in, int out,
                                                               const TensorShape& shape,
                                                               Tensor** result) {
  TensorValue& v = params_.inputs[in];
  if (v.ref == nullptr && v.tensor.RefCountIsOne() &&
      v.tensor.allocator() ==
          params_.device->GetAllocator(params_.kernel->output_memory_type(out)) &&
      v.tensor.dtype() == RemoveRefType(params_.kernel->output_type(out)) &&
      v.tensor.NumElements() == shape.num_elements() && !DataTypeIsObject(v.tensor.dtype())) {
    outputs_[out].tensor = v.tensor.Reshaped(shape);
    *result = &outputs_[out].tensor;
    return absl::OkStatus();
  }
  return allocate_output(out, shape, result);
}

namespace {
// DEVICE_MEMORY for every argument but those named HostMemory and those of
// object dtypes.
absl::Status MemoryTypesForNode(const NodeDef& node, const OpDef& op_def,
                                const std::vector<std::string>& host_memory,
                                const std::vector<DataType>& inputs,
                                const std::vector<DataType>& outputs,
                                std::vector<MemoryType>* input_memory,
                                std::vector<MemoryType>* output_memory) {
  auto init = [](const std::vector<DataType>& types, std::vector<MemoryType>* memory) {
    memory->clear();
    for (DataType t : types) {
      memory->push_back(DataTypeIsObject(RemoveRefType(t)) ? HOST_MEMORY : DEVICE_MEMORY);
    }
  };
  init(inputs, input_memory);
  init(outputs, output_memory);
  std::vector<std::pair<int, int>> in_ranges, out_ranges;
  TG_RETURN_IF_ERROR(InputArgRanges(node, op_def, &in_ranges));
  TG_RETURN_IF_ERROR(OutputArgRanges(node, op_def, &out_ranges));
  for (const std::string& name : host_memory) {
    bool found = false;
    auto mark = [&](const std::vector<ArgDef>& args, const std::vector<std::pair<int, int>>& ranges,
                    std::vector<MemoryType>* memory) {
      for (size_t a = 0; a < args.size(); ++a) {
        if (args[a].name != name) continue;
        found = true;
        for (int i = ranges[a].first; i < ranges[a].second; ++i) (*memory)[i] = HOST_MEMORY;
      }
    };
    mark(op_def.inputs, in_ranges, input_memory);
    mark(op_def.outputs, out_ranges, output_memory);
    if (!found) {
      return errors::Internal("kernel for op '", node.op(), "' declares HostMemory('", name,
                              "'), which is not one of its arguments");
    }
  }
  return absl::OkStatus();
}
}  // namespace

KernelRegistry* KernelRegistry::Global() {
  static KernelRegistry* registry = new KernelRegistry();
  return registry;
}

void KernelRegistry::Register(const KernelDefBuilder& def, KernelFactory factory) {
  absl::MutexLock lock(&mu_);
  kernels_[def.op_].push_back(Registration{def, std::move(factory)});
}

int KernelRegistry::RegisterCopies(const std::string& op, absl::string_view from,
                                   const std::string& to,
                                   const std::vector<std::string>& host_memory) {
  absl::MutexLock lock(&mu_);
  std::vector<Registration>& regs = kernels_[op];
  std::vector<Registration> copies;
  for (const Registration& r : regs) {
    if (r.def.device_type_ != from) continue;
    Registration copy = r;
    copy.def.device_type_ = to;
    copy.def.host_memory_ = host_memory;
    copies.push_back(std::move(copy));
  }
  for (Registration& c : copies) regs.push_back(std::move(c));
  return static_cast<int>(copies.size());
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

absl::StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(
    Device* device, const NodeDef& node, const OpDef& op_def, int graph_def_version) const {
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
  std::vector<MemoryType> input_memory, output_memory;
  if (device->GetAllocator(DEVICE_MEMORY) != nullptr) {
    TG_RETURN_IF_ERROR(MemoryTypesForNode(node, op_def, r->def.host_memory_, inputs, outputs,
                                          &input_memory, &output_memory));
  }
  OpKernelConstruction ctx(device, node, op_def, std::move(inputs), std::move(outputs),
                           graph_def_version);
  ctx.set_memory_types(std::move(input_memory), std::move(output_memory));
  std::unique_ptr<OpKernel> kernel = r->factory(ctx);
  if (!ctx.status().ok()) {
    return WithContext(ctx.status(), absl::StrCat("node '", node.name(), "' (", node.op(), ")"));
  }
  return kernel;
}

}  // namespace tensorgrid
