// SaveV2 and RestoreV2, TensorFlow's checkpoint ops, over the format of
// checkpoint_format.h (docs/checkpoints.md).
//
//   SaveV2(prefix, tensor_names, shape_and_slices, tensors...)
//   RestoreV2(prefix, tensor_names, shape_and_slices) -> tensors (attr dtypes)
//
// Checkpoints hold whole tensors: every shape_and_slices entry must be ""
// (a slice spec is Unimplemented). RestoreV2 checks each tensor's dtype
// against `dtypes` and, when the node carries the optional attr
// `_expected_shapes` (list(shape), one per tensor; the Saver sets it from its
// variables' shapes), its shape too: a mismatch is InvalidArgument naming the
// tensor, the checkpoint's shape and the expected one.
#include <string>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "core/util/checkpoint_format.h"

namespace tensorgrid {

namespace {

// The prefix and the names of a SaveV2/RestoreV2 call, checked.
struct CheckpointArgs {
  std::string prefix;
  const std::string* names = nullptr;
};

absl::StatusOr<CheckpointArgs> ReadArgs(OpKernelContext& ctx, int64_t num_tensors) {
  const Tensor& prefix = ctx.input(0);
  const Tensor& names = ctx.input(1);
  const Tensor& slices = ctx.input(2);
  if (prefix.dtype() != DT_STRING || prefix.dims() != 0) {
    return errors::InvalidArgument("prefix must be a string scalar, got ", prefix.DebugString());
  }
  if (names.dims() != 1 || names.NumElements() != num_tensors) {
    return errors::InvalidArgument("tensor_names must be a vector of ", num_tensors,
                                   " names (one per tensor), got shape ",
                                   names.shape().DebugString());
  }
  if (slices.dims() != 1 || slices.NumElements() != num_tensors) {
    return errors::InvalidArgument("shape_and_slices must be a vector of ", num_tensors,
                                   " strings (one per tensor), got shape ",
                                   slices.shape().DebugString());
  }
  for (int64_t i = 0; i < num_tensors; ++i) {
    const std::string& spec = slices.data<std::string>()[i];
    if (!spec.empty()) {
      return errors::Unimplemented(
          "tensor '", names.data<std::string>()[i], "': shape_and_slices '", spec,
          "' asks for a slice, but tensorgrid checkpoints hold whole tensors only (pass '')");
    }
  }
  CheckpointArgs args;
  args.prefix = prefix.scalar<std::string>();
  if (args.prefix.empty()) return errors::InvalidArgument("the checkpoint prefix is empty");
  args.names = names.data<std::string>();
  return args;
}

class SaveV2Op final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    const int64_t n = num_inputs() - 3;
    TG_ASSIGN_OR_RETURN(CheckpointArgs args, ReadArgs(ctx, n));
    absl::Status s = Save(ctx, args, n);
    return WithContext(s, absl::StrCat("saving checkpoint '", args.prefix, "'"));
  }

 private:
  absl::Status Save(OpKernelContext& ctx, const CheckpointArgs& args, int64_t n) const {
    TG_ASSIGN_OR_RETURN(auto writer, checkpoint::CheckpointWriter::Create(args.prefix));
    for (int64_t i = 0; i < n; ++i) {
      TG_RETURN_IF_ERROR(writer->Add(args.names[i], ctx.input(static_cast<int>(3 + i))));
    }
    return writer->Finish();
  }
};

class RestoreV2Op final : public OpKernel {
 public:
  explicit RestoreV2Op(OpKernelConstruction& ctx) : OpKernel(ctx) {
    auto it = ctx.def().attr().find("_expected_shapes");
    if (it == ctx.def().attr().end()) return;
    const auto& shapes = it->second.list().shape();
    if (shapes.size() != num_outputs()) {
      ctx.SetStatus(errors::InvalidArgument("_expected_shapes has ", shapes.size(), " shapes for ",
                                            num_outputs(), " tensors"));
      return;
    }
    for (const TensorShapeProto& proto : shapes) {
      auto shape = PartialTensorShape::FromProto(proto);
      TG_REQUIRES_OK_CTOR(ctx, shape.status());
      expected_shapes_.push_back(*std::move(shape));
    }
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(CheckpointArgs args, ReadArgs(ctx, num_outputs()));
    TG_ASSIGN_OR_RETURN(auto reader, checkpoint::CheckpointReader::Open(args.prefix));
    for (int i = 0; i < num_outputs(); ++i) {
      const std::string& name = args.names[i];
      const checkpoint::CheckpointReader::Entry* e = reader->Find(name);
      if (e == nullptr) {
        return errors::NotFound("tensor '", name, "' not found in checkpoint '", args.prefix,
                                "' (index file '", checkpoint::IndexPath(args.prefix), "')");
      }
      if (e->dtype != output_type(i)) {
        return errors::InvalidArgument("tensor '", name, "' in checkpoint '", args.prefix,
                                       "' has dtype ", DataTypeString(e->dtype),
                                       ", but the graph expects ", DataTypeString(output_type(i)));
      }
      if (!expected_shapes_.empty() && !expected_shapes_[i].IsCompatibleWith(e->shape)) {
        return errors::InvalidArgument("tensor '", name, "' in checkpoint '", args.prefix,
                                       "' has shape ", e->shape.DebugString(),
                                       ", but the graph expects shape ",
                                       expected_shapes_[i].DebugString());
      }
      TG_ASSIGN_OR_RETURN(Tensor t, reader->Read(name));
      ctx.set_output(i, std::move(t));
    }
    return absl::OkStatus();
  }

 private:
  std::vector<PartialTensorShape> expected_shapes_;  // empty: not checked
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("SaveV2").Device(DEVICE_CPU), SaveV2Op);
TG_REGISTER_KERNEL(KernelDefBuilder("RestoreV2").Device(DEVICE_CPU), RestoreV2Op);

}  // namespace tensorgrid
