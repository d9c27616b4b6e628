#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class VariableOpsTest : public OpsTestBase {
 protected:
  // Runs a VariableV2 node named `name` and returns its variable.
  std::shared_ptr<Var> MakeVariable(const std::string& name, DataType dtype = DT_FLOAT) {
    EXPECT_OK(MakeOp(NodeDefBuilder(name, "VariableV2")
                         .Attr("dtype", dtype)
                         .Attr("shape", PartialTensorShape({2}))));
    EXPECT_OK(RunOp());
    return GetOutputRef(0);
  }
  Tensor Handle(const std::string& name) {
    EXPECT_OK(MakeOp(NodeDefBuilder(name, "VarHandleOp")
                         .Attr("dtype", DT_FLOAT)
                         .Attr("shape", PartialTensorShape({2}))));
    EXPECT_OK(RunOp());
    return GetOutput(0);
  }
};

TEST_F(VariableOpsTest, VariablePersistsInTheResourceManager) {
  std::shared_ptr<Var> a = MakeVariable("v");
  std::shared_ptr<Var> b = MakeVariable("v");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->name(), "v");
}

TEST_F(VariableOpsTest, AssignThenAddAndSub) {
  std::shared_ptr<Var> v = MakeVariable("v");
  ASSERT_OK(MakeOp(NodeDefBuilder("assign", "Assign").Attr("T", DT_FLOAT)));
  AddRefInput(v);
  AddInput(Tensor::FromVector<float>({1, 2}, TensorShape({2})));
  ASSERT_OK(RunOp());
  EXPECT_EQ(GetOutputRef(0), v);

  ASSERT_OK(MakeOp(NodeDefBuilder("add", "AssignAdd").Attr("T", DT_FLOAT)));
  inputs_.clear();
  AddRefInput(v);
  AddInput(Tensor::FromVector<float>({10, 20}, TensorShape({2})));
  ASSERT_OK(RunOp());
  ASSERT_OK(MakeOp(NodeDefBuilder("sub", "AssignSub").Attr("T", DT_FLOAT)));
  inputs_[1] = TensorValue{Tensor::FromVector<float>({1, 1}, TensorShape({2})), nullptr};
  ASSERT_OK(RunOp());
  absl::MutexLock lock(&v->mu);
  ExpectTensorEqual<float>(v->tensor, {10, 21}, TensorShape({2}));
}

TEST_F(VariableOpsTest, ReadersKeepTheirSnapshot) {
  std::shared_ptr<Var> v = MakeVariable("v");
  ASSERT_OK(MakeOp(NodeDefBuilder("assign", "Assign").Attr("T", DT_FLOAT)));
  AddRefInput(v);
  AddInput(Tensor::FromVector<float>({1, 2}, TensorShape({2})));
  ASSERT_OK(RunOp());
  Tensor snapshot;
  {
    absl::MutexLock lock(&v->mu);
    snapshot = v->tensor;
  }
  ASSERT_OK(MakeOp(NodeDefBuilder("add", "AssignAdd").Attr("T", DT_FLOAT)));
  inputs_[1] = TensorValue{Tensor::FromVector<float>({5, 5}, TensorShape({2})), nullptr};
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(snapshot, {1, 2}, TensorShape({2}));
}

TEST_F(VariableOpsTest, Errors) {
  std::shared_ptr<Var> v = MakeVariable("w");
  ASSERT_OK(MakeOp(NodeDefBuilder("add", "AssignAdd").Attr("T", DT_FLOAT)));
  AddRefInput(v);
  AddInput(Tensor::FromVector<float>({1, 1}, TensorShape({2})));
  EXPECT_STATUS(RunOp(), kFailedPrecondition, "uninitialized variable 'w'");

  ASSERT_OK(MakeOp(NodeDefBuilder("assign", "Assign").Attr("T", DT_FLOAT)));
  ASSERT_OK(RunOp());
  inputs_[1] = TensorValue{Tensor::FromVector<float>({1, 2, 3}, TensorShape({3})), nullptr};
  EXPECT_STATUS(RunOp(), kInvalidArgument, "shape [3] to variable 'w' of shape [2]");

  ASSERT_OK(MakeOp(
      NodeDefBuilder("assign2", "Assign").Attr("T", DT_FLOAT).Attr("validate_shape", false)));
  ASSERT_OK(RunOp());  // validate_shape=false allows a new shape
  absl::MutexLock lock(&v->mu);
  EXPECT_EQ(v->tensor.shape(), TensorShape({3}));
}

TEST_F(VariableOpsTest, ResourceVariableLifecycle) {
  Tensor h = Handle("rv");
  EXPECT_EQ(h.scalar<ResourceHandle>().name, "rv");

  ASSERT_OK(MakeOp(NodeDefBuilder("read", "ReadVariableOp").Attr("dtype", DT_FLOAT)));
  AddInput(h);
  EXPECT_STATUS(RunOp(), kFailedPrecondition, "uninitialized variable 'rv'");

  ASSERT_OK(MakeOp(NodeDefBuilder("assign", "AssignVariableOp").Attr("dtype", DT_FLOAT)));
  AddInput(Tensor::FromVector<float>({3, 4}, TensorShape({2})));
  ASSERT_OK(RunOp());

  ASSERT_OK(MakeOp(NodeDefBuilder("add", "AssignAddVariableOp").Attr("dtype", DT_FLOAT)));
  inputs_[1] = TensorValue{Tensor::FromVector<float>({1, 1}, TensorShape({2})), nullptr};
  ASSERT_OK(RunOp());

  ASSERT_OK(MakeOp(NodeDefBuilder("read", "ReadVariableOp").Attr("dtype", DT_FLOAT)));
  inputs_.resize(1);
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {4, 5}, TensorShape({2}));

  ASSERT_OK(MakeOp(NodeDefBuilder("read_int", "ReadVariableOp").Attr("dtype", DT_INT32)));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "has type float, read as int32");

  ASSERT_OK(MakeOp(NodeDefBuilder("assign_int", "AssignVariableOp").Attr("dtype", DT_INT32)));
  inputs_.push_back(TensorValue{Tensor::FromVector<int32_t>({1, 1}, TensorShape({2})), nullptr});
  EXPECT_STATUS(RunOp(), kInvalidArgument, "cannot assign a int32 value to variable 'rv'");
}

}  // namespace
}  // namespace tensorgrid
