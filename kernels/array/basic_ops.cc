// Const, Placeholder, PlaceholderWithDefault, Identity, NoOp, and the call
// frame ops _Arg / _Retval through which a step's feeds and fetches flow.
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {

class ConstOp final : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("value", &value_));
    DataType dtype;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("dtype", &dtype));
    if (value_.dtype() != dtype) {
      ctx.SetStatus(errors::InvalidArgument("value is ", DataTypeString(value_.dtype()),
                                            " but attr dtype is ", DataTypeString(dtype)));
    }
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    ctx.set_output(0, value_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  Tensor value_;
};

class PlaceholderOp final : public OpKernel {
 public:
  explicit PlaceholderOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("shape", &shape_));
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    return errors::InvalidArgument("you must feed a value for placeholder '", name(), "' of type ",
                                   DataTypeString(output_type(0)), " and shape ",
                                   shape_.DebugString());
  }
  bool IsExpensive() const override { return false; }

 private:
  PartialTensorShape shape_;
};

class PlaceholderWithDefaultOp final : public OpKernel {
 public:
  explicit PlaceholderWithDefaultOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("shape", &shape_));
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    if (!shape_.IsCompatibleWith(ctx.input(0).shape())) {
      return errors::InvalidArgument("default value has shape ", ctx.input(0).shape().DebugString(),
                                     ", incompatible with the placeholder's shape ",
                                     shape_.DebugString());
    }
    ctx.set_output(0, ctx.input(0));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  PartialTensorShape shape_;
};

class IdentityOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    ctx.set_output(0, ctx.input(0));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class NoOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext&) override { return absl::OkStatus(); }
  bool IsExpensive() const override { return false; }
};

class ArgOp final : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("index", &index_));
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    CallFrame* frame = ctx.call_frame();
    if (frame == nullptr || index_ >= static_cast<int64_t>(frame->args.size())) {
      return errors::Internal("no argument ", index_, " in the call frame");
    }
    const Tensor& t = frame->args[index_];
    if (t.dtype() != output_type(0)) {
      return errors::InvalidArgument("fed a ", DataTypeString(t.dtype()), " tensor, expected ",
                                     DataTypeString(output_type(0)));
    }
    ctx.set_output(0, t);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  int64_t index_ = 0;
};

class RetvalOp final : public OpKernel {
 public:
  explicit RetvalOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("index", &index_));
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    CallFrame* frame = ctx.call_frame();
    if (frame == nullptr || index_ >= static_cast<int64_t>(frame->retvals.size())) {
      return errors::Internal("no return value ", index_, " in the call frame");
    }
    frame->retvals[index_] = ctx.input(0);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  int64_t index_ = 0;
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("Const").Device(DEVICE_CPU), ConstOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Placeholder").Device(DEVICE_CPU), PlaceholderOp);
TG_REGISTER_KERNEL(KernelDefBuilder("PlaceholderWithDefault").Device(DEVICE_CPU),
                   PlaceholderWithDefaultOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Identity").Device(DEVICE_CPU), IdentityOp);
TG_REGISTER_KERNEL(KernelDefBuilder("NoOp").Device(DEVICE_CPU), NoOp);
TG_REGISTER_KERNEL(KernelDefBuilder("_Arg").Device(DEVICE_CPU), ArgOp);
TG_REGISTER_KERNEL(KernelDefBuilder("_Retval").Device(DEVICE_CPU), RetvalOp);

// On a GPU these move handles only: feeds arrive and fetches leave in host
// memory (the executor copies a fetched device tensor out), and Identity
// passes its input on wherever it lives. Const on a GPU is in //kernels/gpu.
TG_REGISTER_KERNEL(KernelDefBuilder("Placeholder").Device(DEVICE_GPU), PlaceholderOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Identity").Device(DEVICE_GPU), IdentityOp);
TG_REGISTER_KERNEL(KernelDefBuilder("NoOp").Device(DEVICE_GPU), NoOp);
TG_REGISTER_KERNEL(KernelDefBuilder("_Arg").Device(DEVICE_GPU).HostMemory("output"), ArgOp);
TG_REGISTER_KERNEL(KernelDefBuilder("_Retval").Device(DEVICE_GPU).HostMemory("input"), RetvalOp);

}  // namespace tensorgrid
