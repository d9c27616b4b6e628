// SaveV2, RestoreV2 and MergeV2Checkpoints, TensorFlow's checkpoint ops,
// over the tensor bundle of core/util/tensor_bundle.h (docs/checkpoints.md).
//
//   SaveV2(prefix, tensor_names, shape_and_slices, tensors...)
//   RestoreV2(prefix, tensor_names, shape_and_slices) -> tensors (attr dtypes)
//   MergeV2Checkpoints(checkpoint_prefixes, destination_prefix)
//
// A shape_and_slices entry "" means the whole tensor; "4 4 0,2:-" a slice
// (here rows 0-1 of a 4x4 tensor): SaveV2 stores the given tensor as that
// slice, RestoreV2 reads that slice. RestoreV2 checks each tensor's dtype
// against `dtypes` and, when the node carries the optional attr
// `_expected_shapes` (list(shape), one per tensor; the Saver sets it from its
// variables' shapes), its shape too: a mismatch is InvalidArgument naming the
// tensor, the checkpoint's shape and the expected one.
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "core/platform/file.h"
#include "core/util/tensor_bundle.h"

namespace tensorgrid {

namespace {

// The prefix and the names of a SaveV2/RestoreV2 call, checked.
struct CheckpointArgs {
  std::string prefix;
  const std::string* names = nullptr;
  // One per tensor; a slice where shape_and_slices gave one.
  std::vector<std::optional<checkpoint::ShapeAndSlice>> slices;
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
  CheckpointArgs args;
  for (int64_t i = 0; i < num_tensors; ++i) {
    const std::string& spec = slices.data<std::string>()[i];
    if (spec.empty()) {
      args.slices.emplace_back();
      continue;
    }
    auto parsed = checkpoint::ParseShapeAndSlice(spec);
    if (!parsed.ok()) {
      return errors::InvalidArgument("tensor '", names.data<std::string>()[i],
                                     "': ", parsed.status().message());
    }
    args.slices.emplace_back(*std::move(parsed));
  }
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
      const Tensor& t = ctx.input(static_cast<int>(3 + i));
      if (args.slices[i].has_value()) {
        const checkpoint::ShapeAndSlice& s = *args.slices[i];
        TG_RETURN_IF_ERROR(writer->AddSlice(args.names[i], s.full_shape, s.slice, t));
      } else {
        TG_RETURN_IF_ERROR(writer->Add(args.names[i], t));
      }
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
      TensorShape shape = e->shape;
      if (args.slices[i].has_value()) {
        const checkpoint::ShapeAndSlice& s = *args.slices[i];
        if (s.full_shape != e->shape) {
          return errors::InvalidArgument("tensor '", name, "' in checkpoint '", args.prefix,
                                         "' has shape ", e->shape.DebugString(),
                                         ", but shape_and_slices says ",
                                         s.full_shape.DebugString());
        }
        shape = s.slice_shape;
      }
      if (!expected_shapes_.empty() && !expected_shapes_[i].IsCompatibleWith(shape)) {
        return errors::InvalidArgument("tensor '", name, "' in checkpoint '", args.prefix,
                                       "' has shape ", shape.DebugString(),
                                       ", but the graph expects shape ",
                                       expected_shapes_[i].DebugString());
      }
      TG_ASSIGN_OR_RETURN(Tensor t, args.slices[i].has_value()
                                        ? reader->Read(name, args.slices[i]->slice)
                                        : reader->Read(name));
      ctx.set_output(i, std::move(t));
    }
    return absl::OkStatus();
  }

 private:
  std::vector<PartialTensorShape> expected_shapes_;  // empty: not checked
};

// Merges the bundles of checkpoint_prefixes into destination_prefix (one
// data shard), deletes the sources and, with delete_old_dirs, their
// directories once empty (TensorFlow's sharded savers write each shard under
// <prefix>_temp_<uuid>/ and merge).
class MergeV2CheckpointsOp final : public OpKernel {
 public:
  explicit MergeV2CheckpointsOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    const auto& attrs = ctx.def().attr();
    auto it = attrs.find("delete_old_dirs");
    if (it != attrs.end()) delete_old_dirs_ = it->second.b();
    it = attrs.find("allow_missing_files");
    if (it != attrs.end()) allow_missing_files_ = it->second.b();
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& sources = ctx.input(0);
    const Tensor& destination = ctx.input(1);
    if (sources.dtype() != DT_STRING || sources.dims() != 1) {
      return errors::InvalidArgument("checkpoint_prefixes must be a string vector, got ",
                                     sources.DebugString());
    }
    if (destination.dtype() != DT_STRING || destination.dims() != 0) {
      return errors::InvalidArgument("destination_prefix must be a string scalar, got ",
                                     destination.DebugString());
    }
    const std::string& merged = destination.scalar<std::string>();
    const std::vector<std::string> prefixes(
        sources.data<std::string>(), sources.data<std::string>() + sources.NumElements());
    absl::Status s = checkpoint::MergeCheckpoints(prefixes, merged, allow_missing_files_);
    TG_RETURN_IF_ERROR(WithContext(s, absl::StrCat("merging checkpoints into '", merged, "'")));
    if (delete_old_dirs_) {
      const std::string merged_dir = Dirname(merged);
      for (const std::string& prefix : prefixes) {
        const std::string dir = Dirname(prefix);
        // Fails (and is ignored) while the directory still holds anything.
        if (dir != merged_dir) ::rmdir(dir.c_str());
      }
    }
    return absl::OkStatus();
  }

 private:
  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("MergeV2Checkpoints").Device(DEVICE_CPU),
                   MergeV2CheckpointsOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SaveV2").Device(DEVICE_CPU), SaveV2Op);
TG_REGISTER_KERNEL(KernelDefBuilder("RestoreV2").Device(DEVICE_CPU), RestoreV2Op);

}  // namespace tensorgrid
