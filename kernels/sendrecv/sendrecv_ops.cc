// _Send and _Recv: the two ends of an edge cut by partitioning. The sender
// leaves its input in the step's rendezvous under a key naming both devices
// and the tensor; the receiver waits for it asynchronously.
#include "core/framework/device_context.h"
#include "core/framework/device_name.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {

class SendOp final : public OpKernel {
 public:
  explicit SendOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    auto key = RendezvousKeyOf(ctx.def());
    TG_REQUIRES_OK_CTOR(ctx, key.status());
    key_ = *key;
    std::string send_device, recv_device;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("send_device", &send_device));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("recv_device", &recv_device));
    to_other_task_ = !DeviceNameUtils::IsSameAddressSpace(send_device, recv_device);
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    if (ctx.rendezvous() == nullptr) return errors::Internal("step has no rendezvous");
    // In-process receivers take the tensor where it is (their executor
    // copies it if they want it elsewhere); another task gets host memory,
    // copied once here, which the transports then send as they always do.
    if (to_other_task_ && !ctx.input(0).OnHost()) {
      TG_ASSIGN_OR_RETURN(Tensor host, EnsureMemory(ctx.input(0), HOST_MEMORY, nullptr));
      return ctx.rendezvous()->Send(key_, host);
    }
    return ctx.rendezvous()->Send(key_, ctx.input(0));
  }
  bool IsExpensive() const override { return false; }

 private:
  std::string key_;
  bool to_other_task_ = false;
};

class RecvOp final : public AsyncOpKernel {
 public:
  explicit RecvOp(OpKernelConstruction& ctx) : AsyncOpKernel(ctx) {
    auto key = RendezvousKeyOf(ctx.def());
    TG_REQUIRES_OK_CTOR(ctx, key.status());
    key_ = *key;
  }
  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    if (ctx.rendezvous() == nullptr) {
      done(errors::Internal("step has no rendezvous"));
      return;
    }
    // The step's cancellation withdraws the receive (the step failed
    // elsewhere, or its client went away), here and at a remote sender.
    ctx.rendezvous()->RecvAsync(
        key_,
        [&ctx, done = std::move(done)](const absl::Status& s, const Tensor& value) {
          if (s.ok()) ctx.set_output(0, value);
          done(s);
        },
        ctx.cancellation());
  }
  bool IsExpensive() const override { return false; }

 private:
  std::string key_;
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("_Send").Device(DEVICE_CPU), SendOp);
TG_REGISTER_KERNEL(KernelDefBuilder("_Recv").Device(DEVICE_CPU), RecvOp);
TG_REGISTER_KERNEL(KernelDefBuilder("_Send").Device(DEVICE_GPU), SendOp);
TG_REGISTER_KERNEL(KernelDefBuilder("_Recv").Device(DEVICE_GPU), RecvOp);

}  // namespace tensorgrid
