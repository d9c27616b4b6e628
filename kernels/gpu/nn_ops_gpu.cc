// Softmax and the softmax cross-entropies on the GPU. Checks and messages
// are the CPU kernels' (kernels/nn/softmax_op.cc, cross_entropy_shape.h).
//
// SparseSoftmaxCrossEntropyWithLogits keeps its labels in device memory, as
// in TensorFlow, yet still rejects a label outside [0, classes) with the CPU
// kernel's InvalidArgument: the kernel records the first bad row in a device
// word, which is copied back (a wait for the stream) before the op returns.
#include "core/framework/device_context.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/gpu/cwise_ops.cu.h"
#include "kernels/gpu/reduction_ops.cu.h"
#include "kernels/index_values.h"
#include "kernels/nn/cross_entropy_shape.h"

namespace tensorgrid {
namespace gpu {
namespace {

template <typename T>
class SoftmaxGpuOp final : public OpKernel {
 public:
  explicit SoftmaxGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& logits = ctx.input(0);
    if (logits.dims() < 1) {
      return errors::InvalidArgument("logits must have >= 1 dimension, got shape ",
                                     logits.shape().DebugString());
    }
    const T* in = logits.data<T>();  // read before the buffer may be forwarded
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, logits.shape(), &out));
    if (logits.NumElements() == 0) return absl::OkStatus();
    const int64_t classes = logits.dim_size(logits.dims() - 1);
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(LaunchSoftmax<T>(in, out->data<T>(), logits.NumElements() / classes, classes,
                                       gpu->stream()),
                      "Softmax");
  }
};

template <typename T>
class SoftmaxXentGpuOp final : public OpKernel {
 public:
  explicit SoftmaxXentGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& features = ctx.input(0);
    const Tensor& labels = ctx.input(1);
    TG_ASSIGN_OR_RETURN(auto dims, SoftmaxXentDims(features.shape(), labels.shape()));
    const int64_t batch = dims.first, classes = dims.second;
    Tensor *loss, *backprop;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape({batch}), &loss));
    TG_RETURN_IF_ERROR(ctx.allocate_output(1, TensorShape({batch, classes}), &backprop));
    GpuDevice* gpu = GpuDevice::From(ctx);
    if (classes == 0) {  // an empty sum: every loss is 0
      return CudaStatus(
          LaunchFillScalar<T>(T(0), loss->data<T>(), batch, gpu->multiprocessors(), gpu->stream()),
          "SoftmaxCrossEntropyWithLogits");
    }
    // A dimension of size 1 against a larger one repeats: stride 0.
    auto row_stride = [&](const Tensor& t) { return t.dim_size(0) == 1 ? 0 : t.dim_size(1); };
    auto col_stride = [&](const Tensor& t) { return t.dim_size(1) == 1 ? int64_t{0} : int64_t{1}; };
    return CudaStatus(
        LaunchXent<T>(features.data<T>(), row_stride(features), col_stride(features),
                      labels.data<T>(), row_stride(labels), col_stride(labels), loss->data<T>(),
                      backprop->data<T>(), batch, classes, gpu->stream()),
        "SoftmaxCrossEntropyWithLogits");
  }
};

template <typename T>
class SparseSoftmaxXentGpuOp final : public OpKernel {
 public:
  explicit SparseSoftmaxXentGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& features = ctx.input(0);
    const Tensor& labels = ctx.input(1);
    TG_RETURN_IF_ERROR(CheckSparseXentShapes(features.shape(), labels.shape()));
    const int64_t batch = features.dim_size(0), classes = features.dim_size(1);
    Tensor *loss, *backprop;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape({batch}), &loss));
    TG_RETURN_IF_ERROR(ctx.allocate_output(1, features.shape(), &backprop));
    if (batch == 0) return absl::OkStatus();
    GpuDevice* gpu = GpuDevice::From(ctx);
    TG_ASSIGN_OR_RETURN(Tensor bad_row, Tensor::Allocate(gpu->GetAllocator(DEVICE_MEMORY), DT_INT64,
                                                         TensorShape({})));
    TG_RETURN_IF_ERROR(CudaStatus(LaunchFillScalar<int64_t>(batch, bad_row.data<int64_t>(), 1,
                                                            gpu->multiprocessors(), gpu->stream()),
                                  "SparseSoftmaxCrossEntropyWithLogits"));
    cudaError_t err;
    if (labels.dtype() == DT_INT32) {
      err = LaunchSparseXent<T, int32_t>(features.data<T>(), labels.data<int32_t>(),
                                         loss->data<T>(), backprop->data<T>(), batch, classes,
                                         bad_row.data<int64_t>(), gpu->stream());
    } else {
      err = LaunchSparseXent<T, int64_t>(features.data<T>(), labels.data<int64_t>(),
                                         loss->data<T>(), backprop->data<T>(), batch, classes,
                                         bad_row.data<int64_t>(), gpu->stream());
    }
    TG_RETURN_IF_ERROR(CudaStatus(err, "SparseSoftmaxCrossEntropyWithLogits"));
    return CheckLabels(gpu, features, labels, bad_row, batch);
  }

 private:
  // Waits for the kernel's verdict; on a bad label, reads the labels back to
  // name it as the CPU kernel does.
  static absl::Status CheckLabels(GpuDevice* gpu, const Tensor& features, const Tensor& labels,
                                  const Tensor& bad_row, int64_t batch) {
    Tensor row(DT_INT64, TensorShape({}));
    TG_RETURN_IF_ERROR(gpu->device_context()->CopyDeviceTensorToCPU(bad_row, &row));
    const int64_t r = row.scalar<int64_t>();
    if (r >= batch) return absl::OkStatus();
    Tensor host_labels(labels.dtype(), labels.shape());
    TG_RETURN_IF_ERROR(gpu->device_context()->CopyDeviceTensorToCPU(labels, &host_labels));
    return LabelOutOfRange(IndexValues(host_labels)[r], r, features.shape());
  }
};

#define TG_REGISTER_NN_(T)                                                                         \
  TG_REGISTER_KERNEL(KernelDefBuilder("Softmax").Device(DEVICE_GPU).TypeConstraint<T>("T"),        \
                     SoftmaxGpuOp<T>);                                                             \
  TG_REGISTER_KERNEL(                                                                              \
      KernelDefBuilder("SoftmaxCrossEntropyWithLogits").Device(DEVICE_GPU).TypeConstraint<T>("T"), \
      SoftmaxXentGpuOp<T>);                                                                        \
  TG_REGISTER_KERNEL(KernelDefBuilder("SparseSoftmaxCrossEntropyWithLogits")                       \
                         .Device(DEVICE_GPU)                                                       \
                         .TypeConstraint<T>("T"),                                                  \
                     SparseSoftmaxXentGpuOp<T>)
TG_REGISTER_NN_(float);
TG_REGISTER_NN_(double);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
