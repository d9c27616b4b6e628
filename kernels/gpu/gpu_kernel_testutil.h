// Tests of GPU kernels against their CPU twins: GpuKernelTest makes a CPU
// device and a GPU (through the registered "GPU" device factory) and runs
// one node on each with the same inputs; the GPU run places each input in
// the memory its kernel declares (EnsureMemory) and brings every output back
// to the host. With no GPU, SetUp prints "skipped: no GPU: ..." and skips.
//
//   TEST_F(GpuKernelTest, AddBroadcasts) {
//     NodeDefBuilder add("add", "Add");
//     add.Attr("T", DT_FLOAT);
//     ExpectSameOutputs(add, {Random<float>({2, 3}), Random<float>({3})});
//   }
#ifndef TENSORGRID_KERNELS_GPU_GPU_KERNEL_TESTUTIL_H_
#define TENSORGRID_KERNELS_GPU_GPU_KERNEL_TESTUTIL_H_

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/framework/device.h"
#include "core/framework/op_kernel.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace gpu {

// One run of one node on one device.
struct KernelRun {
  absl::Status status;          // the kernel's construction or Compute, then the device's Sync
  std::vector<Tensor> outputs;  // in host memory
};

class GpuKernelTest : public ::testing::Test {
 protected:
  void SetUp() override;

  Device* cpu() { return cpu_.get(); }
  Device* gpu() { return gpu_.get(); }

  // Runs `node` on `device` with `inputs` (host tensors; ref inputs as
  // TensorValue{Tensor(), var} with the variable already in the device's
  // memory). Outputs come back in host memory.
  KernelRun Run(Device* device, const NodeDefBuilder& node, std::vector<TensorValue> inputs);
  KernelRun Run(Device* device, const NodeDefBuilder& node, const std::vector<Tensor>& inputs);

  // Runs `node` on both devices and expects the same status and, when OK,
  // outputs equal within `tolerance` (relative, and absolute near 0; exact
  // for integers and bool; NaN matches NaN).
  void ExpectSameOutputs(const NodeDefBuilder& node, const std::vector<Tensor>& inputs,
                         double tolerance = 1e-5);

  // A variable in `device`'s memory holding `value`.
  std::shared_ptr<Var> MakeVar(Device* device, const Tensor& value, const std::string& name);
  // A resource variable of `device`'s ResourceMgr holding `value`, and its handle.
  Tensor MakeResourceVar(Device* device, const Tensor& value, const std::string& name);
  // The current value of a variable, in host memory.
  Tensor VarValue(const std::shared_ptr<Var>& var);
  Tensor ResourceVarValue(Device* device, const std::string& name);

  // Uniform values in [lo, hi) (rounded for integers; bool: a coin toss).
  template <typename T>
  Tensor Random(const TensorShape& shape, double lo = -2, double hi = 2) {
    Tensor t(DataTypeToEnum<T>::value, shape);
    std::uniform_real_distribution<double> u(lo, hi);
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      const double v = u(rng_);
      if constexpr (std::is_same<T, bool>::value) {
        t.data<T>()[i] = v > (lo + hi) / 2;
      } else if constexpr (std::is_integral<T>::value) {
        t.data<T>()[i] = static_cast<T>(std::floor(v));
      } else {
        t.data<T>()[i] = static_cast<T>(v);
      }
    }
    return t;
  }

 private:
  std::unique_ptr<Device> cpu_;
  std::unique_ptr<Device> gpu_;
  std::mt19937 rng_{20261126};
};

// An int32 vector (a sizes or shape input, which kernels keep in host memory).
Tensor Int32Vector(absl::Span<const int64_t> values);

// Whether `a` and `b` match as ExpectSameOutputs says; the first difference.
::testing::AssertionResult TensorsMatch(const Tensor& a, const Tensor& b, double tolerance);

}  // namespace gpu
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_GPU_GPU_KERNEL_TESTUTIL_H_
