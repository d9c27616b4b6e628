// RandomUniform, RandomStandardNormal and TruncatedNormal on the GPU, seeded
// as the CPU kernels are (kernels/random/random_ops.cc): a node with a
// nonzero seed or seed2 owns the Philox stream keyed by (seed, seed2), each
// run reserves the next range of it, and seed == seed2 == 0 draws a key from
// std::random_device. The host keeps the stream's position; the device
// computes the blocks (random_ops.cu.cc), with the CPU's layout, so uniform
// values equal the CPU's bit for bit and normals to within rounding.
// HostMemory("shape"), as in TensorFlow.
#include <random>

#include "absl/synchronization/mutex.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/gpu/random_ops.cu.h"
#include "kernels/index_values.h"
#include "kernels/random/philox_random.h"

namespace tensorgrid {
namespace gpu {
namespace {

template <typename T, RandomDist kDist>
class RandomGpuOp final : public OpKernel {
 public:
  explicit RandomGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    int64_t seed, seed2;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("seed", &seed));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("seed2", &seed2));
    if (seed == 0 && seed2 == 0) {
      std::random_device rd;
      seed = static_cast<int64_t>(uint64_t{rd()} << 32 | rd());
      seed2 = static_cast<int64_t>(uint64_t{rd()} << 32 | rd());
    }
    absl::MutexLock lock(&mu_);
    generator_ = PhiloxRandom(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& shape_tensor = ctx.input(0);  // host memory
    if (shape_tensor.dims() != 1) {
      return errors::InvalidArgument("shape must be a vector, got a tensor of shape ",
                                     shape_tensor.shape().DebugString());
    }
    TG_ASSIGN_OR_RETURN(TensorShape shape, BuildTensorShape(IndexValues(shape_tensor)));
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &out));
    const int64_t n = out->NumElements();
    const int per_group = RandomResultsPerGroup(kDist, sizeof(T));
    const int64_t groups = (n + per_group - 1) / per_group;
    PhiloxStart start;
    {
      absl::MutexLock lock(&mu_);  // this run's range of the stream
      for (int i = 0; i < 4; ++i) start.counter[i] = generator_.counter()[i];
      for (int i = 0; i < 2; ++i) start.key[i] = generator_.key()[i];
      generator_.Skip(static_cast<uint64_t>(groups) * RandomBlocksPerGroup(kDist));
    }
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(
        LaunchRandom<T>(kDist, start, out->data<T>(), n, gpu->multiprocessors(), gpu->stream()),
        type_string());
  }

 private:
  // The node's stream: Compute advances it, which is the op's state.
  absl::Mutex mu_;
  PhiloxRandom generator_ ABSL_GUARDED_BY(mu_){0, 0};
};

#define TG_REGISTER_RANDOM_(op, T, dist)                                                      \
  TG_REGISTER_KERNEL(                                                                         \
      KernelDefBuilder(op).Device(DEVICE_GPU).TypeConstraint<T>("dtype").HostMemory("shape"), \
      RandomGpuOp<T, dist>)
TG_REGISTER_RANDOM_("RandomUniform", float, RandomDist::kUniform);
TG_REGISTER_RANDOM_("RandomUniform", double, RandomDist::kUniform);
TG_REGISTER_RANDOM_("RandomStandardNormal", float, RandomDist::kNormal);
TG_REGISTER_RANDOM_("RandomStandardNormal", double, RandomDist::kNormal);
TG_REGISTER_RANDOM_("TruncatedNormal", float, RandomDist::kTruncatedNormal);
TG_REGISTER_RANDOM_("TruncatedNormal", double, RandomDist::kTruncatedNormal);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
