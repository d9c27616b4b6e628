// A small fixture for kernel unit tests: build one node, feed its inputs,
// run its CPU kernel directly (no graph, no executor), inspect outputs.
//
//   class MatMulTest : public OpsTestBase {};
//   TEST_F(MatMulTest, Basic) {
//     MakeOp(NodeDefBuilder("m", "MatMul").Attr("T", DT_FLOAT).Attr("transpose_b", true));
//     AddInput(Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}));
//     AddInput(Tensor::FromVector<float>({1, 0, 0, 1}, {2, 2}));
//     ASSERT_OK(RunOp());
//     ExpectTensorEqual<float>(GetOutput(0), {1, 2, 3, 4}, {2, 2});
//   }
#ifndef TENSORGRID_KERNELS_OPS_TESTUTIL_H_
#define TENSORGRID_KERNELS_OPS_TESTUTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "core/framework/attr_value_util.h"
#include "core/framework/device.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status_testutil.h"  // ASSERT_OK, EXPECT_STATUS
#include "gtest/gtest.h"

namespace tensorgrid {

// Fluent NodeDef construction: inputs are named "input0", "input1", ...
class NodeDefBuilder {
 public:
  NodeDefBuilder(const std::string& name, const std::string& op) {
    def_.set_name(name);
    def_.set_op(op);
  }
  template <typename T>
  NodeDefBuilder& Attr(const std::string& name, const T& value) {
    SetAttr(&def_, name, value);
    return *this;
  }
  NodeDefBuilder& NumInputs(int n) {
    for (int i = 0; i < n; ++i) def_.add_input("input" + std::to_string(i));
    return *this;
  }
  const NodeDef& def() const { return def_; }

 private:
  NodeDef def_;
};

// The output shapes `op_name`'s shape function infers from `inputs`, as
// strings ("[2,?]").
std::vector<std::string> InferShapes(const std::string& op_name,
                                     std::vector<PartialTensorShape> inputs);

// Element-wise checks of a tensor against expected values and shape.
template <typename T>
void ExpectTensorEqual(const Tensor& t, std::vector<T> values, const TensorShape& shape) {
  ASSERT_EQ(t.dtype(), DataTypeToEnum<T>::value) << t.DebugString();
  ASSERT_EQ(t.shape(), shape) << t.DebugString();
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(t.data<T>()[i], values[i]) << "at " << i;
}
template <typename T>
void ExpectTensorNear(const Tensor& t, std::vector<T> values, const TensorShape& shape,
                      double tolerance = 1e-5) {
  ASSERT_EQ(t.dtype(), DataTypeToEnum<T>::value) << t.DebugString();
  ASSERT_EQ(t.shape(), shape) << t.DebugString();
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(t.data<T>()[i]), static_cast<double>(values[i]), tolerance)
        << "at " << i;
  }
}

class OpsTestBase : public ::testing::Test {
 protected:
  OpsTestBase() : device_(NewCpuDevice("/job:localhost/replica:0/task:0/device:CPU:0", 2)) {}

  // Validates the node against its op (filling defaults; data inputs are
  // added automatically if the builder named none) and creates the kernel.
  absl::Status MakeOp(const NodeDefBuilder& builder);
  void AddInput(Tensor t) { inputs_.push_back(TensorValue{std::move(t), nullptr}); }
  void AddRefInput(std::shared_ptr<Var> var) {
    inputs_.push_back(TensorValue{Tensor(), std::move(var)});
  }
  absl::Status RunOp();
  const Tensor& GetOutput(int i) const { return outputs_[i].tensor; }
  const std::shared_ptr<Var>& GetOutputRef(int i) const { return outputs_[i].ref; }
  Device* device() { return device_.get(); }
  CallFrame* call_frame() { return &frame_; }

  NodeDef node_def_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<OpKernel> kernel_;
  std::vector<TensorValue> inputs_;
  std::vector<TensorValue> outputs_;
  CallFrame frame_;
  CancellationManager cancellation_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_OPS_TESTUTIL_H_
