#include "kernels/ops_testutil.h"

#include "core/framework/shape_inference.h"
#include "core/platform/status.h"

namespace tensorgrid {

std::vector<std::string> InferShapes(const std::string& op_name,
                                     std::vector<PartialTensorShape> inputs) {
  const OpDef* op = OpRegistry::Global()->Find(op_name);
  EXPECT_NE(op, nullptr) << op_name;
  std::vector<std::string> shapes;
  if (op == nullptr || !op->shape_fn) return shapes;
  NodeDef node;
  node.set_op(op_name);
  ShapeInferenceContext c(node, std::move(inputs), static_cast<int>(op->outputs.size()));
  absl::Status s = op->shape_fn(c);
  EXPECT_TRUE(s.ok()) << s;
  for (int i = 0; i < c.num_outputs(); ++i) shapes.push_back(c.output(i).DebugString());
  return shapes;
}

absl::Status OpsTestBase::MakeOp(const NodeDefBuilder& builder) {
  node_def_ = builder.def();
  const OpDef* op = OpRegistry::Global()->Find(node_def_.op());
  if (op == nullptr) return errors::NotFound("op '", node_def_.op(), "' is not registered");
  if (node_def_.input_size() == 0) {
    // Count the op's data inputs from the attrs to name them.
    NodeDef probe = node_def_;
    for (int i = 0; i < 64; ++i) {
      if (ValidateNodeDef(*op, &probe).ok()) break;
      probe.add_input("input" + std::to_string(i));
    }
    *node_def_.mutable_input() = probe.input();
  }
  TG_RETURN_IF_ERROR(ValidateNodeDef(*op, &node_def_));
  TG_ASSIGN_OR_RETURN(kernel_,
                      KernelRegistry::Global()->CreateKernel(device_.get(), node_def_, *op));
  return absl::OkStatus();
}

absl::Status OpsTestBase::RunOp() {
  if (kernel_ == nullptr) return errors::FailedPrecondition("MakeOp was not called or failed");
  // Ref inputs reach non-ref input slots dereferenced, as the executor does.
  for (int i = 0; i < kernel_->num_inputs() && i < static_cast<int>(inputs_.size()); ++i) {
    TensorValue& v = inputs_[i];
    if (v.ref != nullptr && !IsRefType(kernel_->input_type(i))) {
      absl::MutexLock lock(&v.ref->mu);
      if (!v.ref->initialized)
        return errors::FailedPrecondition("uninitialized variable input ", i);
      v.tensor = v.ref->tensor;
      v.ref = nullptr;
    }
  }
  OpKernelContext::Params params;
  params.device = device_.get();
  params.kernel = kernel_.get();
  params.inputs = inputs_.data();
  params.call_frame = &frame_;
  params.cancellation = &cancellation_;
  OpKernelContext ctx(params);
  absl::Status s = kernel_->Compute(ctx);
  outputs_.assign(ctx.outputs().begin(), ctx.outputs().end());
  return s;
}

}  // namespace tensorgrid
