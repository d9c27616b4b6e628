// ShardedFilename and ShardedFilespec: the names Saver gives the shards of a
// sharded checkpoint, "basename-00002-of-00005", and the pattern matching
// all of them, "basename-?????-of-00005".
#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

// Input `i` as a scalar of type T; a one-element vector passes too, as
// TensorFlow's kernels accept for these inputs (legacy scalars).
template <typename T>
absl::StatusOr<T> ScalarInput(const OpKernelContext& ctx, int i, const char* name) {
  const Tensor& t = ctx.input(i);
  if (t.dims() > 1 || t.NumElements() != 1) {
    return errors::InvalidArgument(name, " must be a scalar, got a tensor of shape ",
                                   t.shape().DebugString());
  }
  return t.data<T>()[0];
}

class ShardedFilenameOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(std::string basename, ScalarInput<std::string>(ctx, 0, "basename"));
    TG_ASSIGN_OR_RETURN(int32_t shard, ScalarInput<int32_t>(ctx, 1, "shard"));
    TG_ASSIGN_OR_RETURN(int32_t num_shards, ScalarInput<int32_t>(ctx, 2, "num_shards"));
    ctx.set_output(0, Tensor::Scalar<std::string>(
                          absl::StrFormat("%s-%05d-of-%05d", basename, shard, num_shards)));
    return absl::OkStatus();
  }
};

class ShardedFilespecOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(std::string basename, ScalarInput<std::string>(ctx, 0, "basename"));
    TG_ASSIGN_OR_RETURN(int32_t num_shards, ScalarInput<int32_t>(ctx, 1, "num_shards"));
    ctx.set_output(0, Tensor::Scalar<std::string>(absl::StrFormat("%s-?????"
                                                                  "-of-%05d",
                                                                  basename, num_shards)));
    return absl::OkStatus();
  }
};

TG_REGISTER_KERNEL(KernelDefBuilder("ShardedFilename").Device(DEVICE_CPU), ShardedFilenameOp);
TG_REGISTER_KERNEL(KernelDefBuilder("ShardedFilespec").Device(DEVICE_CPU), ShardedFilespecOp);

}  // namespace
}  // namespace tensorgrid
