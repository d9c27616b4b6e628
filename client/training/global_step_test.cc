#include "client/training/global_step.h"

#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace training {
namespace {

TEST(GlobalStepTest, CreateThenGet) {
  Scope root = Scope::NewRootScope();
  EXPECT_STATUS(GetGlobalStep(root).status(), kNotFound, "the graph has no global step");
  absl::StatusOr<Variable> step = CreateGlobalStep(root);
  ASSERT_OK(step.status());
  EXPECT_EQ(step->name(), "global_step");
  EXPECT_EQ(step->dtype(), DT_INT64);
  EXPECT_EQ(step->shape(), TensorShape({}));
  EXPECT_FALSE(step->trainable());
  EXPECT_FALSE(step->is_resource());

  // Found from any scope of the graph.
  absl::StatusOr<Variable> found = GetGlobalStep(root.NewSubScope("elsewhere"));
  ASSERT_OK(found.status());
  EXPECT_EQ(found->handle(), step->handle());
  EXPECT_EQ(GetOrCreateGlobalStep(root).handle(), step->handle());
  EXPECT_STATUS(CreateGlobalStep(root).status(), kAlreadyExists,
                "the graph already has a global step: 'global_step'");
  EXPECT_TRUE(TrainableVariables(root).empty());
  ASSERT_EQ(GlobalVariables(root).size(), 1u);
}

TEST(GlobalStepTest, GetOrCreateCreatesOnceAndStartsAtZero) {
  Scope root = Scope::NewRootScope();
  Variable step = GetOrCreateGlobalStep(root);
  Variable again = GetOrCreateGlobalStep(root);
  ASSERT_OK(root.status());
  EXPECT_EQ(step.handle(), again.handle());
  auto increment = ops::AssignAdd(root, step.handle(), int64_t{1});
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, nullptr));
  ASSERT_OK(session.Run({}, {}, {increment.operation}, nullptr));
  ASSERT_OK(session.Run({}, {}, {increment.operation}, nullptr));
  ASSERT_OK(session.Run({step.value()}, &out));
  ExpectTensorEqual<int64_t>(out[0], {2}, TensorShape({}));
}

TEST(GlobalStepTest, AStepOfTheWrongTypeIsRejected) {
  Scope root = Scope::NewRootScope();
  VariableOptions options;
  options.collections = {kGlobalStep};
  Variable bad(root, "global_step", {2}, DT_FLOAT, Zeros(), options);
  EXPECT_STATUS(GetGlobalStep(root).status(), kInvalidArgument,
                "global step 'global_step' must be an int32 or int64 scalar, not float [2]");
  EXPECT_FALSE(GetOrCreateGlobalStep(root).valid());
  EXPECT_STATUS(root.status(), kInvalidArgument, "must be an int32 or int64 scalar");
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
