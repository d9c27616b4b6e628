#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class VariableStatusOpsTest : public OpsTestBase {};

TEST_F(VariableStatusOpsTest, IsVariableInitialized) {
  auto var = std::make_shared<Var>(DT_FLOAT, "w");
  ASSERT_OK(MakeOp(NodeDefBuilder("init?", "IsVariableInitialized").Attr("dtype", DT_FLOAT)));
  AddRefInput(var);
  ASSERT_OK(RunOp());  // an uninitialized ref input is allowed here
  ExpectTensorEqual<bool>(GetOutput(0), {false}, TensorShape({}));
  {
    absl::MutexLock lock(&var->mu);
    var->tensor = Tensor::Scalar<float>(1.f);
    var->initialized = true;
  }
  ASSERT_OK(RunOp());
  ExpectTensorEqual<bool>(GetOutput(0), {true}, TensorShape({}));
}

TEST_F(VariableStatusOpsTest, VarIsInitializedOp) {
  ResourceHandle h;
  h.name = "rv";
  ASSERT_OK(MakeOp(NodeDefBuilder("init?", "VarIsInitializedOp")));
  AddInput(Tensor::Scalar<ResourceHandle>(h));
  ASSERT_OK(RunOp());  // no variable yet
  ExpectTensorEqual<bool>(GetOutput(0), {false}, TensorShape({}));

  auto var = device()->resource_manager()->LookupOrCreate<Var>(
      "", "rv", [] { return std::make_shared<Var>(DT_FLOAT, "rv"); });
  ASSERT_TRUE(var.ok());
  ASSERT_OK(RunOp());  // created but never assigned
  ExpectTensorEqual<bool>(GetOutput(0), {false}, TensorShape({}));
  {
    absl::MutexLock lock(&(*var)->mu);
    (*var)->tensor = Tensor::Scalar<float>(1.f);
    (*var)->initialized = true;
  }
  ASSERT_OK(RunOp());
  ExpectTensorEqual<bool>(GetOutput(0), {true}, TensorShape({}));
}

TEST_F(VariableStatusOpsTest, UninitializedVariableNames) {
  ASSERT_OK(MakeOp(NodeDefBuilder("report", "_UninitializedVariableNames")
                       .Attr("N", int64_t{3})
                       .Attr("names", std::vector<std::string>{"a", "b", "c"})));
  AddInput(Tensor::Scalar<bool>(false));
  AddInput(Tensor::Scalar<bool>(true));
  AddInput(Tensor::Scalar<bool>(false));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"a", "c"}, TensorShape({2}));

  inputs_[0] = TensorValue{Tensor::Scalar<bool>(true), nullptr};
  inputs_[2] = TensorValue{Tensor::Scalar<bool>(true), nullptr};
  ASSERT_OK(RunOp());
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({0}));

  EXPECT_STATUS(MakeOp(NodeDefBuilder("bad", "_UninitializedVariableNames")
                           .Attr("N", int64_t{2})
                           .Attr("names", std::vector<std::string>{"a"})),
                kInvalidArgument, "attr 'names' has 1 names for 2 inputs");
}

}  // namespace
}  // namespace tensorgrid
