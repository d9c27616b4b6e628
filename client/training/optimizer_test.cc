// The optimizers on a local session: ApplyGradients against updates worked
// out by hand (ref and resource variables), slots and their placement, the
// global step, errors, concurrent locked steps, and Minimize through
// symbolic gradients.
#include "client/training/optimizer.h"

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "client/ops/training_ops.h"
#include "client/training/global_step.h"
#include "core/framework/attr_value_util.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace training {
namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:";

VariableOptions Kind(bool resource) {
  VariableOptions options;
  options.use_resource = resource;
  return options;
}

Tensor Fetch(const ClientSession& session, const Output& output) {
  std::vector<Tensor> out;
  absl::Status s = session.Run({output}, &out);
  EXPECT_TRUE(s.ok()) << s;
  return out.empty() ? Tensor() : out[0];
}

void RunTarget(const ClientSession& session, const Operation& op,
               const ClientSession::FeedType& feeds = {}) {
  absl::Status s = session.Run(feeds, {}, {op}, nullptr);
  ASSERT_TRUE(s.ok()) << s;
}

const NodeDef* FindNode(const Scope& scope, const std::string& name) {
  static GraphDef graph;
  EXPECT_OK(scope.ToGraphDef(&graph));
  for (const NodeDef& n : graph.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

// Parameterized on the variables' kind: false = ref, true = resource.
class OptimizerTest : public ::testing::TestWithParam<bool> {
 protected:
  VariableOptions kind() const { return Kind(GetParam()); }
};

TEST_P(OptimizerTest, GradientDescent) {
  Scope root = Scope::NewRootScope();
  Variable w(root, "w", {2}, DT_FLOAT, Constant(Tensor::FromVector<float>({1, 2}, {2})), kind());
  GradientDescentOptimizer sgd(0.1);
  auto grad = ops::Const(root, {0.5f, 1.f});
  absl::StatusOr<Operation> train = sgd.ApplyGradients(root, {{grad, w}});
  ASSERT_OK(train.status());
  EXPECT_EQ(train->name(), "GradientDescent");
  EXPECT_EQ(sgd.GetSlotNames(), std::vector<std::string>{});
  ClientSession session(root);
  RunTarget(session, GlobalVariablesInitializer(root));
  RunTarget(session, *train);
  RunTarget(session, *train);
  ExpectTensorNear<float>(Fetch(session, w.value()), {0.9f, 1.8f}, TensorShape({2}));
}

TEST_P(OptimizerTest, MomentumSlotAndUpdates) {
  for (bool nesterov : {false, true}) {
    SCOPED_TRACE(nesterov ? "nesterov" : "plain");
    Scope root = Scope::NewRootScope();
    Variable w(root, "w", {2}, DT_FLOAT, Constant(Tensor::FromVector<float>({1, 2}, {2})), kind());
    MomentumOptimizer momentum(2.0, 0.9, MomentumOptimizer::UseNesterov(nesterov));
    absl::StatusOr<Operation> train =
        momentum.ApplyGradients(root, {{ops::Const(root, {0.3f, 0.4f}), w}});
    ASSERT_OK(train.status());
    const Variable accum = momentum.GetSlot(w, "momentum");
    ASSERT_TRUE(accum.valid());
    EXPECT_EQ(accum.name(), "w/Momentum");
    EXPECT_FALSE(accum.trainable());
    EXPECT_EQ(accum.is_resource(), GetParam());
    EXPECT_EQ(momentum.GetSlotNames(), std::vector<std::string>{"momentum"});
    ClientSession session(root);
    RunTarget(session, GlobalVariablesInitializer(root));
    ExpectTensorEqual<float>(Fetch(session, accum.value()), {0, 0}, TensorShape({2}));
    RunTarget(session, *train);
    RunTarget(session, *train);
    // accum: [0.3, 0.4], then [0.57, 0.76].
    ExpectTensorNear<float>(Fetch(session, accum.value()), {0.57f, 0.76f}, TensorShape({2}));
    // Plain: var -= 2 * accum each step; Nesterov: var -= 2 * (grad + 0.9 * accum).
    const std::vector<float> want = nesterov
                                        ? std::vector<float>{1 - 1.14f - 1.626f, 2 - 1.52f - 2.168f}
                                        : std::vector<float>{1 - 0.6f - 1.14f, 2 - 0.8f - 1.52f};
    ExpectTensorNear<float>(Fetch(session, w.value()), want, TensorShape({2}));
  }
}

TEST_P(OptimizerTest, AdagradStartsFromTheInitialAccumulatorValue) {
  Scope root = Scope::NewRootScope();
  Variable w(root, "w", {2}, DT_FLOAT, Constant(Tensor::FromVector<float>({1, 2}, {2})), kind());
  AdagradOptimizer adagrad(3.0, AdagradOptimizer::InitialAccumulatorValue(0.1));
  absl::StatusOr<Operation> train =
      adagrad.ApplyGradients(root, {{ops::Const(root, {0.1f, 0.2f}), w}});
  ASSERT_OK(train.status());
  const Variable accum = adagrad.GetSlot(w, "accumulator");
  EXPECT_EQ(accum.name(), "w/Adagrad");
  ClientSession session(root);
  RunTarget(session, GlobalVariablesInitializer(root));
  RunTarget(session, *train);
  ExpectTensorNear<float>(Fetch(session, accum.value()), {0.11f, 0.14f}, TensorShape({2}));
  ExpectTensorNear<float>(Fetch(session, w.value()), {0.0954660f, 0.3964325f}, TensorShape({2}));
}

TEST_P(OptimizerTest, AdamThreeStepsWithBiasCorrectionAndGlobalStep) {
  Scope root = Scope::NewRootScope();
  Variable w(root, "w", {2}, DT_DOUBLE, Constant(Tensor::FromVector<double>({1, -2}, {2})), kind());
  Variable step = GetOrCreateGlobalStep(root);
  auto grad = ops::Placeholder(root, DT_DOUBLE);
  AdamOptimizer adam(0.1);
  absl::StatusOr<Operation> train = adam.ApplyGradients(root, {{grad, w}}, step);
  ASSERT_OK(train.status());
  EXPECT_EQ(train->name(), "Adam");
  const Variable m = adam.GetSlot(w, "m"), v = adam.GetSlot(w, "v");
  EXPECT_EQ(m.name(), "w/Adam");
  EXPECT_EQ(v.name(), "w/Adam_1");
  EXPECT_EQ(adam.beta1_power().name(), "beta1_power");
  EXPECT_EQ(adam.beta2_power().name(), "beta2_power");
  EXPECT_EQ(adam.beta1_power().dtype(), DT_DOUBLE);
  ClientSession session(root);
  RunTarget(session, GlobalVariablesInitializer(root));
  // By hand (kernels/training/training_ops_test.cc has the same steps).
  const std::vector<std::vector<double>> grads = {{0.5, -1.0}, {0.2, 0.3}, {-0.4, 0.1}};
  const std::vector<std::vector<double>> want = {{0.9000000632455132, -1.9000000316227665},
                                                 {0.8101425955771205, -1.8572151854374255},
                                                 {0.7925147177420513, -1.8303899754493038}};
  for (size_t t = 0; t < grads.size(); ++t) {
    RunTarget(session, *train, {{grad, Tensor::FromVector<double>(grads[t], {2})}});
    ExpectTensorNear<double>(Fetch(session, w.value()), want[t], TensorShape({2}), 1e-12);
  }
  ExpectTensorNear<double>(Fetch(session, m.value()), {0.0185, -0.044}, TensorShape({2}), 1e-12);
  ExpectTensorNear<double>(Fetch(session, adam.beta1_power().value()), {0.9 * 0.9 * 0.9 * 0.9},
                           TensorShape({}), 1e-12);
  ExpectTensorNear<double>(Fetch(session, adam.beta2_power().value()),
                           {0.999 * 0.999 * 0.999 * 0.999}, TensorShape({}), 1e-12);
  ExpectTensorEqual<int64_t>(Fetch(session, step.value()), {3}, TensorShape({}));
}

TEST_P(OptimizerTest, ConcurrentLockedStepsLoseNoUpdate) {
  constexpr int kThreads = 4, kSteps = 50, kSize = 1000;
  Scope root = Scope::NewRootScope();
  Variable w(root, "w", {kSize}, DT_FLOAT, Zeros(), kind());
  Variable step = GetOrCreateGlobalStep(root);
  GradientDescentOptimizer sgd(1.0, GradientDescentOptimizer::UseLocking(true));
  auto grad = ops::Const(root, Input::Initializer(1.f, {kSize}));
  absl::StatusOr<Operation> train = sgd.ApplyGradients(root, {{grad, w}}, step);
  ASSERT_OK(train.status());
  ClientSession session(root);
  RunTarget(session, GlobalVariablesInitializer(root));
  std::vector<std::thread> threads;
  std::vector<absl::Status> status(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kSteps && status[t].ok(); ++i) {
        status[t] = session.Run({}, {}, {*train}, nullptr);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const absl::Status& s : status) ASSERT_OK(s);
  ExpectTensorEqual<float>(Fetch(session, w.value()), std::vector<float>(kSize, -kThreads * kSteps),
                           TensorShape({kSize}));
  ExpectTensorEqual<int64_t>(Fetch(session, step.value()), {kThreads * kSteps}, TensorShape({}));
}

// With variables on CPU:1 (a stand-in for a ps task) and the rest on CPU:0,
// the slots, the non-slot variables and the updates all run on CPU:1.
TEST_P(OptimizerTest, SlotsAndUpdatesRunOnTheVariablesDevice) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction([](const NodeDef& node) {
    return node.op() == "VariableV2" || node.op() == "VarHandleOp" ? "/device:CPU:1"
                                                                   : "/device:CPU:0";
  });
  Variable w(s, "w", {2}, DT_FLOAT, Ones(), kind());
  auto grad = ops::Const(s, {1.f, 1.f});
  AdamOptimizer adam(0.1);
  absl::StatusOr<Operation> train = adam.ApplyGradients(s, {{grad, w}});
  ASSERT_OK(train.status());
  for (const char* slot : {"w/Adam", "w/Adam_1", "beta1_power"}) {
    const NodeDef* node = FindNode(root, slot);
    ASSERT_NE(node, nullptr) << slot;
    std::vector<std::string> classes;
    ASSERT_OK(GetNodeAttr(*node, "_class", &classes));
    EXPECT_EQ(classes, std::vector<std::string>{"loc:@w"}) << slot;
  }
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 2;
  ClientSession session(root, options);
  RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  RunMetadata metadata;
  ASSERT_OK(session.Run(run_options, {}, {}, {GlobalVariablesInitializer(s)}, nullptr, &metadata));
  ASSERT_OK(session.Run(run_options, {}, {}, {*train}, nullptr, &metadata));
  std::map<std::string, std::string> device;
  for (const GraphDef& partition : metadata.partition_graphs()) {
    for (const NodeDef& node : partition.node())
      device[node.op() + " " + node.name()] = node.device();
  }
  const std::string cpu1 = std::string(kCpu) + "1";
  const std::string apply = GetParam() ? "ResourceApplyAdam" : "ApplyAdam";
  const std::string var_op = GetParam() ? "VarHandleOp" : "VariableV2";
  EXPECT_EQ(device[apply + " Adam/update_w/" + apply], cpu1);
  EXPECT_EQ(device[var_op + " w/Adam"], cpu1);
  EXPECT_EQ(device[var_op + " w/Adam_1"], cpu1);
  EXPECT_EQ(device[var_op + " beta1_power"], cpu1);
  EXPECT_EQ(device["Const " + grad.node_name()], std::string(kCpu) + "0");
}

TEST_P(OptimizerTest, LearningRateTensorIsCastToTheVariablesDtype) {
  Scope root = Scope::NewRootScope();
  Variable w(root, "w", {1}, DT_DOUBLE, Ones(), kind());
  auto lr = ops::Placeholder(root, DT_FLOAT);
  GradientDescentOptimizer sgd(lr.output);
  absl::StatusOr<Operation> train = sgd.ApplyGradients(root, {{ops::Const(root, {2.0}), w}});
  ASSERT_OK(train.status());
  ClientSession session(root);
  RunTarget(session, GlobalVariablesInitializer(root));
  RunTarget(session, *train, {{lr, 0.25f}});
  RunTarget(session, *train, {{lr, 0.125f}});
  ExpectTensorNear<double>(Fetch(session, w.value()), {1 - 0.5 - 0.25}, TensorShape({1}));
}

INSTANTIATE_TEST_SUITE_P(RefAndResource, OptimizerTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Resource" : "Ref";
                         });

TEST(OptimizerErrorsTest, NoGradientsAndMismatchedDtypes) {
  Scope root = Scope::NewRootScope();
  Variable w(root, "w", {2}, DT_FLOAT, Zeros());
  Variable n(root, "n", {2}, DT_INT32, Zeros());
  GradientDescentOptimizer sgd(0.1);
  EXPECT_STATUS(sgd.ApplyGradients(root, {{Output(), w}}).status(), kInvalidArgument,
                "GradientDescent: no gradients provided for any variable: ['w']");
  EXPECT_STATUS(sgd.ApplyGradients(root, {{ops::Const(root, {1.0, 1.0}), w}}).status(),
                kInvalidArgument,
                "the gradient 'Const:0' for variable 'w' is double, the variable float");
  EXPECT_STATUS(sgd.ApplyGradients(root, {{ops::Const(root, {1, 1}), n}}).status(),
                kInvalidArgument, "variable 'n' is int32; optimizers update float and double");
  const Variable invalid;
  EXPECT_STATUS(sgd.ApplyGradients(root, {{ops::Const(root, {1.f}), invalid}}).status(),
                kInvalidArgument, "variable 0 of the gradient list is invalid");
  EXPECT_STATUS(sgd.ApplyGradients(
                       root, {{ops::Const(root, {1.f, 1.f}), w}, {ops::Const(root, {1.f, 1.f}), w}})
                    .status(),
                kInvalidArgument, "variable 'w' appears twice in the gradient list");
  // A skipped (invalid) gradient leaves its variable alone.
  Variable other(root, "other", {1}, DT_FLOAT, Ones());
  absl::StatusOr<Operation> train =
      sgd.ApplyGradients(root, {{Output(), w}, {ops::Const(root, {1.f}), other}});
  ASSERT_OK(train.status());
  EXPECT_EQ(train->name(), "GradientDescent");  // the failed calls built no update
}

TEST(OptimizerErrorsTest, RunTimeErrorsNameTheNodeAndInput) {
  Scope root = Scope::NewRootScope();
  Variable w(root, "w", {2}, DT_FLOAT, Zeros());
  auto grad = ops::Placeholder(root, DT_FLOAT);
  GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<Operation> train = sgd.ApplyGradients(root, {{grad, w}});
  ASSERT_OK(train.status());
  ClientSession session(root);
  const ClientSession::FeedType good = {{grad, {1.f, 1.f}}};
  EXPECT_STATUS(session.Run(good, {}, {*train}, nullptr), kFailedPrecondition,
                "node 'GradientDescent/update_w/ApplyGradientDescent' (ApplyGradientDescent): "
                "attempting to use uninitialized variable 'w'");
  RunTarget(session, GlobalVariablesInitializer(root));
  EXPECT_STATUS(session.Run({{grad, {1.f, 1.f, 1.f}}}, {}, {*train}, nullptr), kInvalidArgument,
                "node 'GradientDescent/update_w/ApplyGradientDescent' (ApplyGradientDescent): "
                "input 'delta' has shape [3], but the variable has shape [2]");
}

TEST(OptimizerErrorsTest, UpdateOpsCheckDtypesWhenBuilt) {
  Scope root = Scope::NewRootScope();
  auto w = ops::Variable(root.WithOpName("w"), {2}, DT_FLOAT);
  ops::ApplyGradientDescent(root.WithOpName("sgd"), w, 0.1, {1.f, 1.f});  // 0.1 is a double
  EXPECT_STATUS(root.status(), kInvalidArgument,
                "node 'sgd' (ApplyGradientDescent): input 'alpha'");
  Scope other = Scope::NewRootScope();
  auto h = ops::VarHandleOp(other.WithOpName("h"), DT_FLOAT, {2});
  ops::ApplyGradientDescent(other.WithOpName("sgd"), h, 0.1f, {1.f, 1.f});
  EXPECT_STATUS(other.status(), kInvalidArgument,
                "node 'sgd' (ApplyGradientDescent): input 'var' must be a reference");
}

TEST(OptimizerMinimizeTest, GradientDescentStepFromSymbolicGradients) {
  for (bool resource : {false, true}) {
    SCOPED_TRACE(resource ? "resource" : "ref");
    Scope root = Scope::NewRootScope();
    Variable w(root, "w", {2}, DT_FLOAT, Constant(Tensor::FromVector<float>({1, 5}, {2})),
               Kind(resource));
    // loss = sum((w - [3, 1])^2); d loss / d w = 2 (w - [3, 1]).
    auto loss = ops::Sum(root, ops::Square(root, ops::Sub(root, w, {3.f, 1.f})), 0);
    Variable step = GetOrCreateGlobalStep(root);
    GradientDescentOptimizer sgd(0.25);
    absl::StatusOr<Operation> train = sgd.Minimize(root, loss, {}, step);
    ASSERT_OK(train.status());
    ClientSession session(root);
    RunTarget(session, GlobalVariablesInitializer(root));
    RunTarget(session, *train);
    // w - 0.25 * 2 * (w - c) = (w + c) / 2
    ExpectTensorNear<float>(Fetch(session, w.value()), {2.f, 3.f}, TensorShape({2}));
    ExpectTensorEqual<int64_t>(Fetch(session, step.value()), {1}, TensorShape({}));
  }
}

TEST(OptimizerMinimizeTest, ComputeGradientsPairsGradientsWithTheTrainableVariables) {
  Scope root = Scope::NewRootScope();
  Variable a(root, "a", {2}, DT_FLOAT, Ones());
  VariableOptions frozen;
  frozen.trainable = false;
  Variable b(root, "b", {2}, DT_FLOAT, Ones(), frozen);
  auto loss = ops::Sum(root, ops::Mul(root, ops::Mul(root, a, b), {2.f, 3.f}), 0);
  AdamOptimizer adam;
  absl::StatusOr<std::vector<GradAndVar>> gv = adam.ComputeGradients(root, loss);
  ASSERT_OK(gv.status());
  ASSERT_EQ(gv->size(), 1u);
  EXPECT_EQ((*gv)[0].second.name(), "a");
  ClientSession session(root);
  RunTarget(session, GlobalVariablesInitializer(root));
  ExpectTensorNear<float>(Fetch(session, (*gv)[0].first), {2.f, 3.f}, TensorShape({2}));
  // Explicitly asking for a variable the loss does not depend on is an error.
  Variable unused(root, "unused", {1}, DT_FLOAT, Ones());
  EXPECT_STATUS(adam.ComputeGradients(root, loss, {unused}).status(), kInvalidArgument,
                "Adam: computing gradients");
}

// A least-squares fit: every optimizer drives the loss down on both kinds of
// variable.
TEST(OptimizerMinimizeTest, EveryOptimizerFitsALine) {
  for (bool resource : {false, true}) {
    for (int which = 0; which < 4; ++which) {
      SCOPED_TRACE(absl::StrCat(resource ? "resource " : "ref ", which));
      Scope root = Scope::NewRootScope();
      // y = 2x - 1 at x = 0, 1, 2, 3.
      auto x = ops::Const(root, {{0.f}, {1.f}, {2.f}, {3.f}});
      auto y = ops::Const(root, {{-1.f}, {1.f}, {3.f}, {5.f}});
      Variable w(root, "w", {1, 1}, DT_FLOAT, Zeros(), Kind(resource));
      Variable b(root, "b", {1}, DT_FLOAT, Zeros(), Kind(resource));
      auto err = ops::Sub(root, ops::Add(root, ops::MatMul(root, x, w), b), y);
      auto loss = ops::Mean(root, ops::Square(root, err), {0, 1});
      std::unique_ptr<Optimizer> opt;
      switch (which) {
        case 0: opt = std::make_unique<GradientDescentOptimizer>(0.05); break;
        case 1: opt = std::make_unique<MomentumOptimizer>(0.02, 0.9); break;
        case 2: opt = std::make_unique<AdagradOptimizer>(0.5); break;
        default: opt = std::make_unique<AdamOptimizer>(0.1); break;
      }
      absl::StatusOr<Operation> train = opt->Minimize(root, loss);
      ASSERT_OK(train.status());
      ClientSession session(root);
      RunTarget(session, GlobalVariablesInitializer(root));
      const float before = Fetch(session, loss).scalar<float>();
      for (int i = 0; i < 300; ++i) RunTarget(session, *train);
      const float after = Fetch(session, loss).scalar<float>();
      EXPECT_LT(after, 0.01f * before) << before << " -> " << after;
    }
  }
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
