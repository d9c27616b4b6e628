// The optimizer kernels, run directly: each update rule against values
// worked out by hand (ref and resource forms), the errors, and concurrent
// updates under use_locking.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

// Parameterized on the form: false = ref (ApplyX), true = resource (ResourceApplyX).
class ApplyOpsTest : public OpsTestBase, public ::testing::WithParamInterface<bool> {
 protected:
  bool resource() const { return GetParam(); }
  std::string Op(const std::string& name) const { return resource() ? "Resource" + name : name; }

  // An initialized variable `name` in the device's resource manager.
  template <typename T>
  std::shared_ptr<Var> NewVar(const std::string& name, std::vector<T> values) {
    auto var = device()->resource_manager()->LookupOrCreate<Var>(
        "", name, [&] { return std::make_shared<Var>(DataTypeToEnum<T>::value, name); });
    EXPECT_TRUE(var.ok()) << var.status();
    absl::MutexLock lock(&(*var)->mu);
    (*var)->tensor =
        Tensor::FromVector<T>(values, TensorShape({static_cast<int64_t>(values.size())}));
    (*var)->initialized = true;
    return *var;
  }
  // The variable as the op's input: a ref, or a handle naming it.
  TensorValue VarInput(const std::shared_ptr<Var>& var) const {
    if (!resource()) return TensorValue{Tensor(), var};
    ResourceHandle h;
    h.name = var->name();
    h.device = device_->name();
    h.type_name = "Var";
    return TensorValue{Tensor::Scalar<ResourceHandle>(h), nullptr};
  }
  void AddVar(const std::shared_ptr<Var>& var) { inputs_.push_back(VarInput(var)); }
  static Tensor Value(const std::shared_ptr<Var>& var) {
    absl::MutexLock lock(&var->mu);
    return var->tensor;
  }
  template <typename T>
  static Tensor Vec(std::vector<T> values) {
    return Tensor::FromVector<T>(values, TensorShape({static_cast<int64_t>(values.size())}));
  }
  // Runs the op, and for the ref form checks that it outputs the variable.
  void RunAndCheckOutput(const std::shared_ptr<Var>& var) {
    ASSERT_OK(RunOp());
    if (!resource()) {
      EXPECT_EQ(GetOutputRef(0), var);
    }
  }
};

TEST_P(ApplyOpsTest, GradientDescent) {
  auto var = NewVar<float>("w", {1.f, 2.f});
  ASSERT_OK(MakeOp(NodeDefBuilder("sgd", Op("ApplyGradientDescent")).Attr("T", DT_FLOAT)));
  AddVar(var);
  AddInput(Tensor::Scalar<float>(0.5f));
  AddInput(Vec<float>({0.2f, 0.4f}));
  RunAndCheckOutput(var);
  ExpectTensorNear<float>(Value(var), {0.9f, 1.8f}, TensorShape({2}));
  RunAndCheckOutput(var);
  ExpectTensorNear<float>(Value(var), {0.8f, 1.6f}, TensorShape({2}));
}

TEST_P(ApplyOpsTest, Momentum) {
  auto var = NewVar<float>("w", {1.f, 2.f});
  auto accum = NewVar<float>("w/Momentum", {0.1f, 0.2f});
  ASSERT_OK(MakeOp(NodeDefBuilder("momentum", Op("ApplyMomentum")).Attr("T", DT_FLOAT)));
  AddVar(var);
  AddVar(accum);
  AddInput(Tensor::Scalar<float>(2.f));   // lr
  AddInput(Vec<float>({0.3f, 0.4f}));     // grad
  AddInput(Tensor::Scalar<float>(0.9f));  // momentum
  // accum = 0.9 * [0.1, 0.2] + [0.3, 0.4] = [0.39, 0.58]; var -= 2 * accum.
  RunAndCheckOutput(var);
  ExpectTensorNear<float>(Value(accum), {0.39f, 0.58f}, TensorShape({2}));
  ExpectTensorNear<float>(Value(var), {0.22f, 0.84f}, TensorShape({2}));
  // accum = 0.9 * [0.39, 0.58] + [0.3, 0.4] = [0.651, 0.922]; var -= 2 * accum.
  RunAndCheckOutput(var);
  ExpectTensorNear<float>(Value(accum), {0.651f, 0.922f}, TensorShape({2}));
  ExpectTensorNear<float>(Value(var), {-1.082f, -1.004f}, TensorShape({2}));
}

TEST_P(ApplyOpsTest, NesterovMomentum) {
  auto var = NewVar<float>("w", {1.f, 2.f});
  auto accum = NewVar<float>("w/Momentum", {0.1f, 0.2f});
  ASSERT_OK(MakeOp(NodeDefBuilder("momentum", Op("ApplyMomentum"))
                       .Attr("T", DT_FLOAT)
                       .Attr("use_nesterov", true)));
  AddVar(var);
  AddVar(accum);
  AddInput(Tensor::Scalar<float>(2.f));
  AddInput(Vec<float>({0.3f, 0.4f}));
  AddInput(Tensor::Scalar<float>(0.9f));
  // accum = [0.39, 0.58]; var -= grad * 2 + accum * 0.9 * 2 = [1.302, 1.844].
  RunAndCheckOutput(var);
  ExpectTensorNear<float>(Value(var), {-0.302f, 0.156f}, TensorShape({2}));
  // accum = [0.651, 0.922]; var -= [0.6 + 1.1718, 0.8 + 1.6596].
  RunAndCheckOutput(var);
  ExpectTensorNear<float>(Value(accum), {0.651f, 0.922f}, TensorShape({2}));
  ExpectTensorNear<float>(Value(var), {-2.0738f, -2.3036f}, TensorShape({2}));
}

TEST_P(ApplyOpsTest, Adagrad) {
  auto var = NewVar<float>("w", {1.f, 2.f});
  auto accum = NewVar<float>("w/Adagrad", {0.1f, 0.1f});
  ASSERT_OK(MakeOp(NodeDefBuilder("adagrad", Op("ApplyAdagrad")).Attr("T", DT_FLOAT)));
  AddVar(var);
  AddVar(accum);
  AddInput(Tensor::Scalar<float>(3.f));
  AddInput(Vec<float>({0.1f, 0.2f}));
  // accum = [0.11, 0.14]; var -= 3 * grad / sqrt(accum).
  RunAndCheckOutput(var);
  ExpectTensorNear<float>(Value(accum), {0.11f, 0.14f}, TensorShape({2}));
  ExpectTensorNear<float>(Value(var), {0.0954660f, 0.3964325f}, TensorShape({2}));
  RunAndCheckOutput(var);
  ExpectTensorNear<float>(Value(accum), {0.12f, 0.18f}, TensorShape({2}));
  ExpectTensorNear<float>(Value(var), {-0.7705594f, -1.0177810f}, TensorShape({2}));
}

TEST_P(ApplyOpsTest, AdagradWithoutSlotUpdates) {
  auto var = NewVar<float>("w", {1.f, 2.f});
  auto accum = NewVar<float>("w/Adagrad", {0.25f, 4.f});
  ASSERT_OK(MakeOp(NodeDefBuilder("adagrad", Op("ApplyAdagrad"))
                       .Attr("T", DT_FLOAT)
                       .Attr("update_slots", false)));
  AddVar(var);
  AddVar(accum);
  AddInput(Tensor::Scalar<float>(3.f));
  AddInput(Vec<float>({0.1f, 0.2f}));
  // var -= 3 * [0.1 / 0.5, 0.2 / 2]; accum unchanged.
  RunAndCheckOutput(var);
  ExpectTensorNear<float>(Value(accum), {0.25f, 4.f}, TensorShape({2}));
  ExpectTensorNear<float>(Value(var), {0.4f, 1.7f}, TensorShape({2}));
}

// Three Adam steps in double, the caller advancing beta1_power and
// beta2_power as AdamOptimizer does, so the bias correction changes per step.
TEST_P(ApplyOpsTest, AdamThreeStepsWithBiasCorrection) {
  for (bool nesterov : {false, true}) {
    SCOPED_TRACE(nesterov ? "nesterov" : "plain");
    device()->resource_manager()->Clear();
    auto var = NewVar<double>("w", {1.0, -2.0});
    auto m = NewVar<double>("w/Adam", {0.0, 0.0});
    auto v = NewVar<double>("w/Adam_1", {0.0, 0.0});
    ASSERT_OK(MakeOp(NodeDefBuilder("adam", Op("ApplyAdam"))
                         .Attr("T", DT_DOUBLE)
                         .Attr("use_nesterov", nesterov)));
    const double beta1 = 0.9, beta2 = 0.999;
    const std::vector<std::vector<double>> grads = {{0.5, -1.0}, {0.2, 0.3}, {-0.4, 0.1}};
    // var after each step, computed by hand from the rule in training_ops.cc.
    const std::vector<std::vector<double>> want =
        nesterov ? std::vector<std::vector<double>>{{0.8100001201664752, -1.8100000600832566},
                                                    {0.7014799476746472, -1.7928861216091203},
                                                    {0.7237291880772886, -1.7748400712534749}}
                 : std::vector<std::vector<double>>{{0.9000000632455132, -1.9000000316227665},
                                                    {0.8101425955771205, -1.8572151854374255},
                                                    {0.7925147177420513, -1.8303899754493038}};
    const std::vector<std::vector<double>> want_m = {
        {0.05, -0.1}, {0.065, -0.06}, {0.0185, -0.044}};
    const std::vector<std::vector<double>> want_v = {
        {0.00025, 0.001}, {0.00028975, 0.001089}, {0.00044946025, 0.001097911}};
    double beta1_power = 1, beta2_power = 1;
    for (size_t step = 0; step < grads.size(); ++step) {
      beta1_power *= beta1;
      beta2_power *= beta2;
      inputs_.clear();
      AddVar(var);
      AddVar(m);
      AddVar(v);
      for (double x : {beta1_power, beta2_power, 0.1, beta1, beta2, 1e-8}) {
        AddInput(Tensor::Scalar<double>(x));
      }
      AddInput(Vec<double>(grads[step]));
      RunAndCheckOutput(var);
      ExpectTensorNear<double>(Value(var), want[step], TensorShape({2}), 1e-12);
      ExpectTensorNear<double>(Value(m), want_m[step], TensorShape({2}), 1e-12);
      ExpectTensorNear<double>(Value(v), want_v[step], TensorShape({2}), 1e-12);
    }
  }
}

TEST_P(ApplyOpsTest, UninitializedVariable) {
  ASSERT_OK(MakeOp(NodeDefBuilder("sgd", Op("ApplyGradientDescent")).Attr("T", DT_FLOAT)));
  auto var = device()->resource_manager()->LookupOrCreate<Var>(
      "", "fresh", [] { return std::make_shared<Var>(DT_FLOAT, "fresh"); });
  ASSERT_TRUE(var.ok());
  AddVar(*var);
  AddInput(Tensor::Scalar<float>(0.5f));
  AddInput(Vec<float>({1.f}));
  EXPECT_STATUS(RunOp(), kFailedPrecondition, "attempting to use uninitialized variable 'fresh'");
  if (resource()) {  // a handle to a variable nobody created yet
    ResourceHandle h;
    h.name = "never_assigned";
    inputs_[0] = TensorValue{Tensor::Scalar<ResourceHandle>(h), nullptr};
    EXPECT_STATUS(RunOp(), kFailedPrecondition, "uninitialized variable 'never_assigned'");
  }
}

TEST_P(ApplyOpsTest, UninitializedSlot) {
  auto var = NewVar<float>("w", {1.f});
  auto accum = device()->resource_manager()->LookupOrCreate<Var>(
      "", "w/Momentum", [] { return std::make_shared<Var>(DT_FLOAT, "w/Momentum"); });
  ASSERT_OK(MakeOp(NodeDefBuilder("momentum", Op("ApplyMomentum")).Attr("T", DT_FLOAT)));
  AddVar(var);
  AddVar(*accum);
  AddInput(Tensor::Scalar<float>(0.1f));
  AddInput(Vec<float>({1.f}));
  AddInput(Tensor::Scalar<float>(0.9f));
  EXPECT_STATUS(RunOp(), kFailedPrecondition, "uninitialized variable 'w/Momentum'");
  ExpectTensorEqual<float>(Value(var), {1.f}, TensorShape({1}));  // untouched
}

TEST_P(ApplyOpsTest, ShapeErrorsNameTheInput) {
  auto var = NewVar<float>("w", {1.f, 2.f});
  auto accum = NewVar<float>("w/Momentum", {0.f, 0.f, 0.f});
  ASSERT_OK(MakeOp(NodeDefBuilder("momentum", Op("ApplyMomentum")).Attr("T", DT_FLOAT)));
  AddVar(var);
  AddVar(accum);
  AddInput(Tensor::Scalar<float>(0.1f));
  AddInput(Vec<float>({1.f, 1.f}));
  AddInput(Tensor::Scalar<float>(0.9f));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "input 'accum' (variable 'w/Momentum') has shape [3], but input 'var' (variable "
                "'w') has shape [2]");

  inputs_[1] = VarInput(NewVar<float>("w/Momentum2", {0.f, 0.f}));
  inputs_[3] = TensorValue{Vec<float>({1.f, 1.f, 1.f}), nullptr};
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "input 'grad' has shape [3], but the variable has shape [2]");

  inputs_[3] = TensorValue{Vec<float>({1.f, 1.f}), nullptr};
  inputs_[2] = TensorValue{Vec<float>({0.1f, 0.1f}), nullptr};
  EXPECT_STATUS(RunOp(), kInvalidArgument, "input 'lr' must be a scalar, got shape [2]");
  ExpectTensorEqual<float>(Value(var), {1.f, 2.f}, TensorShape({2}));  // untouched
}

TEST_P(ApplyOpsTest, AdamScalarErrorsNameTheInput) {
  auto var = NewVar<float>("w", {1.f});
  ASSERT_OK(MakeOp(NodeDefBuilder("adam", Op("ApplyAdam")).Attr("T", DT_FLOAT)));
  AddVar(var);
  AddVar(NewVar<float>("m", {0.f}));
  AddVar(NewVar<float>("v", {0.f}));
  for (int i = 0; i < 6; ++i) AddInput(Tensor::Scalar<float>(0.5f));
  AddInput(Vec<float>({1.f}));
  inputs_[8] = TensorValue{Vec<float>({1e-8f}), nullptr};
  EXPECT_STATUS(RunOp(), kInvalidArgument, "input 'epsilon' must be a scalar, got shape [1]");
}

TEST_P(ApplyOpsTest, UpdatesInPlaceUnlessAReaderHoldsTheBuffer) {
  auto var = NewVar<float>("w", {1.f, 2.f});
  ASSERT_OK(MakeOp(NodeDefBuilder("sgd", Op("ApplyGradientDescent")).Attr("T", DT_FLOAT)));
  AddVar(var);
  AddInput(Tensor::Scalar<float>(1.f));
  AddInput(Vec<float>({1.f, 1.f}));
  const float* before = Value(var).data<float>();
  RunAndCheckOutput(var);
  EXPECT_EQ(Value(var).data<float>(), before);  // nobody else held it: updated in place

  Tensor snapshot = Value(var);  // a reader's snapshot
  RunAndCheckOutput(var);
  ExpectTensorEqual<float>(snapshot, {0.f, 1.f}, TensorShape({2}));
  ExpectTensorEqual<float>(Value(var), {-1.f, 0.f}, TensorShape({2}));
}

TEST_P(ApplyOpsTest, ConcurrentLockedUpdatesAreNeverLost) {
  constexpr int kThreads = 4, kSteps = 200, kSize = 1000;
  auto var = NewVar<float>("w", std::vector<float>(kSize, 0.f));
  auto accum = NewVar<float>("w/Momentum", std::vector<float>(kSize, 0.f));
  ASSERT_OK(MakeOp(NodeDefBuilder("sgd", Op("ApplyGradientDescent"))
                       .Attr("T", DT_FLOAT)
                       .Attr("use_locking", true)));
  std::unique_ptr<OpKernel> sgd = std::move(kernel_);
  // Momentum 0 makes accum = grad; var and accum locked together.
  ASSERT_OK(MakeOp(NodeDefBuilder("momentum", Op("ApplyMomentum"))
                       .Attr("T", DT_FLOAT)
                       .Attr("use_locking", true)));
  std::unique_ptr<OpKernel> momentum = std::move(kernel_);
  const Tensor ones = Vec<float>(std::vector<float>(kSize, 1.f));
  std::vector<std::thread> threads;
  std::vector<absl::Status> status(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<TensorValue> sgd_in = {
          VarInput(var), {Tensor::Scalar<float>(1.f), nullptr}, {ones, nullptr}};
      std::vector<TensorValue> momentum_in = {VarInput(var),
                                              VarInput(accum),
                                              {Tensor::Scalar<float>(1.f), nullptr},
                                              {ones, nullptr},
                                              {Tensor::Scalar<float>(0.f), nullptr}};
      for (int i = 0; i < kSteps && status[t].ok(); ++i) {
        OpKernel* kernel = i % 2 ? sgd.get() : momentum.get();
        OpKernelContext::Params params;
        params.device = device();
        params.kernel = kernel;
        params.inputs = i % 2 ? sgd_in.data() : momentum_in.data();
        OpKernelContext ctx(params);
        status[t] = kernel->Compute(ctx);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const absl::Status& s : status) ASSERT_OK(s);
  // Every step subtracts exactly 1 from every element.
  ExpectTensorEqual<float>(Value(var), std::vector<float>(kSize, -kThreads * kSteps),
                           TensorShape({kSize}));
}

TEST_P(ApplyOpsTest, ResourceDtypeMismatchNamesTheInput) {
  if (!resource()) GTEST_SKIP() << "a ref input's dtype fixes T when the graph is built";
  auto var = NewVar<double>("w", {1.0});
  ASSERT_OK(MakeOp(NodeDefBuilder("sgd", Op("ApplyGradientDescent")).Attr("T", DT_FLOAT)));
  AddVar(var);
  AddInput(Tensor::Scalar<float>(1.f));
  AddInput(Vec<float>({1.f}));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "input 'var': variable 'w' has type double, but the update's T is float");
}

INSTANTIATE_TEST_SUITE_P(RefAndResource, ApplyOpsTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Resource" : "Ref";
                         });

TEST(TrainingOpsShapeTest, RefFormsOutputTheVariableShape) {
  EXPECT_EQ(InferShapes("ApplyGradientDescent", {PartialTensorShape({3, 2}), PartialTensorShape({}),
                                                 PartialTensorShape({3, 2})}),
            std::vector<std::string>{"[3,2]"});
}

}  // namespace
}  // namespace tensorgrid
