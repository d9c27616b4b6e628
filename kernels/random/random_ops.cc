// RandomUniform, RandomStandardNormal and TruncatedNormal.
//
// Reproducibility follows TensorFlow: a node with a nonzero seed or seed2
// owns a Philox stream keyed by (seed, seed2). Each run reserves the next
// range of that stream, so repeated runs in one session continue the
// sequence, and two sessions built the same way produce identical values.
// With seed == seed2 == 0 the key comes from std::random_device.
//
// Within a run the output is cut into groups (philox_random.h) that each own a
// fixed range of blocks, so the values do not depend on the thread count.
#define EIGEN_USE_THREADS

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/index_values.h"
#include "kernels/random/philox_random.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace {

// One node's Philox stream, handing out disjoint ranges of it. Thread-safe.
class GuardedPhilox {
 public:
  void Init(int64_t seed, int64_t seed2) {
    if (seed == 0 && seed2 == 0) {
      std::random_device rd;
      seed = static_cast<int64_t>(uint64_t{rd()} << 32 | rd());
      seed2 = static_cast<int64_t>(uint64_t{rd()} << 32 | rd());
    }
    absl::MutexLock lock(&mu_);
    generator_ = PhiloxRandom(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
  }

  // A generator at the start of the next `blocks` blocks, which no later
  // call will be given.
  PhiloxRandom Reserve(uint64_t blocks) {
    absl::MutexLock lock(&mu_);
    PhiloxRandom start = generator_;
    generator_.Skip(blocks);
    return start;
  }

 private:
  absl::Mutex mu_;
  PhiloxRandom generator_ ABSL_GUARDED_BY(mu_){0, 0};
};

// Fills `out` group by group from the stream starting at `gen`.
template <typename T, typename Dist>
void FillRandom(const Eigen::ThreadPoolDevice& device, const PhiloxRandom& gen, int64_t groups,
                T* out, int64_t n) {
  constexpr int kGroup = Dist::kResultsPerGroup;
  const Eigen::TensorOpCost cost(0, kGroup * sizeof(T), kGroup * 40.0);
  device.parallelFor(groups, cost, [&](Eigen::Index first, Eigen::Index last) {
    PhiloxRandom group_start = gen;
    group_start.Skip(static_cast<uint64_t>(first) * Dist::kBlocksPerGroup);
    T values[kGroup];
    for (Eigen::Index g = first; g < last; ++g) {
      PhiloxRandom group_gen = group_start;
      Dist::Generate(group_gen, values);
      std::copy_n(values, std::min<int64_t>(kGroup, n - g * kGroup), out + g * kGroup);
      group_start.Skip(Dist::kBlocksPerGroup);
    }
  });
}

template <typename T, typename Dist>
class RandomOp final : public OpKernel {
 public:
  explicit RandomOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    int64_t seed, seed2;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("seed", &seed));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("seed2", &seed2));
    generator_.Init(seed, seed2);
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& shape_tensor = ctx.input(0);
    if (shape_tensor.dims() != 1) {
      return errors::InvalidArgument("shape must be a vector, got a tensor of shape ",
                                     shape_tensor.shape().DebugString());
    }
    TG_ASSIGN_OR_RETURN(TensorShape shape, BuildTensorShape(IndexValues(shape_tensor)));
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &out));
    const int64_t n = out->NumElements();
    const int64_t groups = (n + Dist::kResultsPerGroup - 1) / Dist::kResultsPerGroup;
    const PhiloxRandom gen =
        generator_.Reserve(static_cast<uint64_t>(groups) * Dist::kBlocksPerGroup);
    FillRandom<T, Dist>(ctx.eigen_cpu_device(), gen, groups, out->data<T>(), n);
    return absl::OkStatus();
  }

 private:
  // The node's stream: Compute advances it, which is the op's state.
  GuardedPhilox generator_;
};

}  // namespace

TG_REGISTER_KERNEL(
    KernelDefBuilder("RandomUniform").Device(DEVICE_CPU).TypeConstraint<float>("dtype"),
    RandomOp<float, UniformDistribution<float>>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("RandomUniform").Device(DEVICE_CPU).TypeConstraint<double>("dtype"),
    RandomOp<double, UniformDistribution<double>>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("RandomStandardNormal").Device(DEVICE_CPU).TypeConstraint<float>("dtype"),
    RandomOp<float, NormalDistribution<float>>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("RandomStandardNormal").Device(DEVICE_CPU).TypeConstraint<double>("dtype"),
    RandomOp<double, NormalDistribution<double>>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("TruncatedNormal").Device(DEVICE_CPU).TypeConstraint<float>("dtype"),
    RandomOp<float, TruncatedNormalDistribution<float>>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("TruncatedNormal").Device(DEVICE_CPU).TypeConstraint<double>("dtype"),
    RandomOp<double, TruncatedNormalDistribution<double>>);

}  // namespace tensorgrid
