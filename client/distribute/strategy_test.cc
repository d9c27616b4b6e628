#include "client/distribute/strategy.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/distribute/strategy_testutil.h"
#include "client/ops/standard_ops.h"
#include "client/training/global_step.h"
#include "client/training/optimizer.h"
#include "client/training/variables.h"
#include "core/platform/status.h"
#include "core/public/session.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace distribute {
namespace {

TEST(StrategyTest, OneDeviceTrainsAndCountsSteps) {
  OneDeviceStrategy one("/device:CPU:0");
  EXPECT_EQ(one.num_replicas_in_sync(), 1);
  absl::StatusOr<Trained> t = Train(one, 3);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->global_step, 6);  // 2 batches x 3 epochs
  EXPECT_LT(t->losses.back(), t->losses.front());
}

TEST(StrategyTest, FitDrawsAProgressBarWhenAsked) {
  OneDeviceStrategy one("/device:CPU:0");
  Scope root = Scope::NewRootScope();
  Scope scope = one.scope(root);
  training::Variable w(scope, "w", {2, 1}, DT_FLOAT, training::Zeros());
  training::GradientDescentOptimizer sgd(0.01);
  absl::StatusOr<DistributedDataset> data = one.ExperimentalDistributeDataset(scope, Data(2));
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->cardinality(), 4);  // 8 rows in batches of 2
  absl::StatusOr<DistributedStep> run = one.Run(
      scope,
      [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
        Output err =
            ops::Sub(ctx.scope(), ops::MatMul(ctx.scope(), ctx.inputs()[0], w), ctx.inputs()[1]);
        Output loss = ops::Mean(ctx.scope(), ops::Square(ctx.scope(), err), {0, 1});
        TG_RETURN_IF_ERROR(ctx.Minimize(&sgd, loss));
        return std::vector<Output>{loss};
      },
      data->inputs());
  ASSERT_TRUE(run.ok()) << run.status();
  Output loss = one.Reduce(scope, ReduceOp::kMean, run->outputs[0]);
  Operation init = training::GlobalVariablesInitializer(root);
  absl::StatusOr<std::unique_ptr<Session>> session = SessionFor(root, one);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Run({}, {}, {init.name()}, nullptr).ok());
  std::ostringstream log;
  FitOptions fit;
  fit.epochs = 2;
  fit.log = &log;
  fit.progress_bar = true;
  absl::StatusOr<FitHistory> history = Fit(session->get(), *data, run->train_op, loss, fit);
  ASSERT_TRUE(history.ok()) << history.status();
  const std::string text = log.str();
  EXPECT_NE(text.find("\r     4/4 [==============================] - "), std::string::npos) << text;
  EXPECT_NE(text.find("s - loss: "), std::string::npos) << text;
  EXPECT_NE(text.find("epoch 2/2: 4 steps in "), std::string::npos) << text;
  // Stopped early, the bar counts to steps_per_epoch.
  fit.epochs = 1;
  fit.steps_per_epoch = 3;
  log.str("");
  ASSERT_TRUE(Fit(session->get(), *data, run->train_op, loss, fit).ok());
  EXPECT_NE(log.str().find("3/3 [====="), std::string::npos) << log.str();
}

TEST(StrategyTest, MirroredMatchesOneReplicaAndKeepsCopiesIdentical) {
  OneDeviceStrategy one("/device:CPU:0");
  absl::StatusOr<Trained> ref = Train(one, 4);
  ASSERT_TRUE(ref.ok()) << ref.status();
  MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"});
  EXPECT_EQ(mirrored.num_replicas_in_sync(), 2);
  absl::StatusOr<Trained> t = Train(mirrored, 4);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->w.size(), 2u);
  // The copies are bit-identical (same all-reduced gradient, same update).
  EXPECT_EQ(t->w[0][0].DebugString(100), t->w[1][0].DebugString(100));
  ExpectNear(t->w[0][0], ref->w[0][0], 1e-5f);
  ExpectNear(t->b, ref->b, 1e-5f);
  EXPECT_EQ(t->global_step, ref->global_step);  // one increment per step, not per replica
  EXPECT_NEAR(t->losses.back(), ref->losses.back(), 1e-5);
}

TEST(StrategyTest, MirroredWithAdamAndFourReplicasMatchesOneReplica) {
  OneDeviceStrategy one("/device:CPU:0");
  absl::StatusOr<Trained> ref = Train(one, 3, /*adam=*/true);
  ASSERT_TRUE(ref.ok()) << ref.status();
  MirroredStrategy::Options no_packing;
  no_packing.bytes_per_pack = 0;
  MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1", "/device:CPU:2", "/device:CPU:3"},
                            no_packing);
  absl::StatusOr<Trained> t = Train(mirrored, 3, /*adam=*/true);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->w.size(), 4u);
  for (int r = 1; r < 4; ++r) EXPECT_EQ(t->w[0][0].DebugString(100), t->w[r][0].DebugString(100));
  ExpectNear(t->w[0][0], ref->w[0][0], 1e-5f);
  ExpectNear(t->b, ref->b, 1e-5f);
}

// 8-16-16-4 with ReLUs, trained three steps by plain SGD; the final
// variables (the primary copies) and the graph.
struct ThreeLayers {
  std::vector<Tensor> vars;  // w1 b1 w2 b2 w3 b3
  GraphDef graph;
};
absl::StatusOr<ThreeLayers> TrainThreeLayers(Strategy& strategy) {
  Tensor x(DT_FLOAT, TensorShape({8, 8}));
  Tensor y(DT_FLOAT, TensorShape({8, 4}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] = 0.1f * ((i * 7) % 11) - 0.5f;
  for (int64_t i = 0; i < y.NumElements(); ++i) y.data<float>()[i] = 0.2f * ((i * 5) % 7) - 0.6f;
  Scope root = Scope::NewRootScope();
  Scope scope = strategy.scope(root);
  const int sizes[] = {8, 16, 16, 4};
  std::vector<training::Variable> vars;
  for (int l = 0; l < 3; ++l) {
    vars.emplace_back(scope, absl::StrCat("w", l + 1), TensorShape({sizes[l], sizes[l + 1]}),
                      DT_FLOAT, training::GlorotUniform(l + 3));
    vars.emplace_back(scope, absl::StrCat("b", l + 1), TensorShape({sizes[l + 1]}), DT_FLOAT,
                      training::Constant(0.01));
  }
  training::GradientDescentOptimizer sgd(0.1);
  TG_ASSIGN_OR_RETURN(DistributedDataset data,
                      strategy.ExperimentalDistributeDataset(
                          scope, Dataset::FromTensorSlices({x, y}).Batch(8).Repeat(3)));
  TG_ASSIGN_OR_RETURN(
      DistributedStep run,
      strategy.Run(
          scope,
          [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
            const Scope& s = ctx.scope();
            Output h = ctx.inputs()[0];
            for (int l = 0; l < 3; ++l) {
              h = ops::Add(s, ops::MatMul(s, h, vars[2 * l]), vars[2 * l + 1]);
              if (l < 2) h = ops::Relu(s, h);
            }
            Output loss = ops::Mean(s, ops::Square(s, ops::Sub(s, h, ctx.inputs()[1])), {0, 1});
            TG_RETURN_IF_ERROR(ctx.Minimize(&sgd, loss));
            return std::vector<Output>{loss};
          },
          data.inputs()));
  Operation init = training::GlobalVariablesInitializer(root);
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, SessionFor(root, strategy));
  TG_RETURN_IF_ERROR(session->Run({}, {}, {init.name()}, nullptr));
  TG_ASSIGN_OR_RETURN(std::unique_ptr<DistributedDataset::Iterator> it, data.MakeIterator());
  FeedList feeds;
  for (bool end = false;;) {
    TG_RETURN_IF_ERROR(it->GetNextFeeds(&feeds, &end));
    if (end) break;
    TG_RETURN_IF_ERROR(session->Run(feeds, {}, {run.train_op.name()}, nullptr));
  }
  ThreeLayers t;
  std::vector<std::string> fetch;
  for (const training::Variable& v : vars) fetch.push_back(v.value().name());
  TG_RETURN_IF_ERROR(session->Run({}, fetch, {}, &t.vars));
  TG_RETURN_IF_ERROR(root.ToGraphDef(&t.graph));
  return t;
}

TEST(StrategyTest, GradientBucketsFollowBackpropAndDoNotWaitForTheFirstLayer) {
  OneDeviceStrategy one("/device:CPU:0");
  absl::StatusOr<ThreeLayers> ref = TrainThreeLayers(one);
  ASSERT_TRUE(ref.ok()) << ref.status();
  MirroredStrategy::Options buckets;
  // Backprop order b3 (16 B), w3 (256), b2 (64), w2 (1 KiB), b1 (64), w1
  // (512): buckets [b3 w3 b2], [w2], [b1], [w1].
  buckets.bytes_per_pack = 512;
  MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"}, buckets);
  absl::StatusOr<ThreeLayers> t = TrainThreeLayers(mirrored);
  ASSERT_TRUE(t.ok()) << t.status();
  for (size_t i = 0; i < ref->vars.size(); ++i) ExpectNear(t->vars[i], ref->vars[i], 1e-4f);

  // For each of replica 0's all-reduces: how many ReluGrads (one per hidden
  // layer's backprop) it waits for. The buckets of layers 3 and 2 must not
  // wait for layer 1's, so they can run while layer 1's backprop does.
  std::map<std::string, const NodeDef*> nodes;
  for (const NodeDef& n : t->graph.node()) nodes[n.name()] = &n;
  std::vector<int> relu_grads;
  for (const NodeDef& n : t->graph.node()) {
    if (n.op() != "CollectiveReduce" || n.device().find("CPU:0") == std::string::npos) continue;
    std::set<std::string> seen;
    std::vector<std::string> stack = {n.name()};
    int count = 0;
    while (!stack.empty()) {
      const NodeDef* node = nodes.at(stack.back());
      stack.pop_back();
      if (node->op() == "ReluGrad") ++count;
      for (std::string in : node->input()) {
        in = in.substr(in[0] == '^' ? 1 : 0);
        in = in.substr(0, in.find(':'));
        if (seen.insert(in).second) stack.push_back(in);
      }
    }
    relu_grads.push_back(count);
  }
  std::sort(relu_grads.begin(), relu_grads.end());
  EXPECT_EQ(relu_grads, (std::vector<int>{1, 1, 2, 2}));
}

TEST(StrategyTest, CentralStorageMatchesOneReplica) {
  OneDeviceStrategy one("/device:CPU:0");
  absl::StatusOr<Trained> ref = Train(one, 4);
  ASSERT_TRUE(ref.ok()) << ref.status();
  CentralStorageStrategy central({"/device:CPU:1", "/device:CPU:2"});
  absl::StatusOr<Trained> t = Train(central, 4);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->w.size(), 1u);
  ExpectNear(t->w[0][0], ref->w[0][0], 1e-5f);
  ExpectNear(t->b, ref->b, 1e-5f);
  EXPECT_EQ(t->global_step, ref->global_step);
}

TEST(StrategyTest, MirroredVariablesResolvePerReplica) {
  MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"});
  Scope root = Scope::NewRootScope();
  training::Variable v(mirrored.scope(root), "v", {3}, DT_FLOAT, training::Ones());
  ASSERT_EQ(v.components().size(), 2u);
  EXPECT_EQ(v.name(), "v");
  EXPECT_EQ(v.components()[1].name(), "v/replica_1");
  {
    training::internal::ReplicaGuard guard(1);
    EXPECT_EQ(v.name(), "v/replica_1");
  }
  EXPECT_EQ(v.name(), "v");
  // Only the primary is trainable; every copy is initialized by the initializer.
  EXPECT_EQ(training::TrainableVariables(root).size(), 1u);
  EXPECT_EQ(training::GlobalVariables(root).size(), 2u);
  // Variables made outside the strategy's scope stay plain.
  training::Variable plain(root, "plain", {1}, DT_FLOAT, training::Zeros());
  EXPECT_TRUE(plain.components().empty());
}

TEST(StrategyTest, OnWriteVariablesAreMirroredWithoutBeingTrained) {
  MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"});
  Scope root = Scope::NewRootScope();
  Scope scope = mirrored.scope(root);
  training::VariableOptions on_write;
  on_write.trainable = false;
  on_write.synchronization = training::VariableSynchronization::kOnWrite;
  training::Variable moving(scope, "moving_mean", {}, DT_FLOAT, training::Constant(5.0), on_write);
  training::VariableOptions plain_options;
  plain_options.trainable = false;
  training::Variable step(scope, "step", {}, DT_FLOAT, training::Zeros(), plain_options);
  ASSERT_EQ(moving.components().size(), 2u);
  EXPECT_TRUE(step.components().empty());  // kAuto: one copy of a non-trainable variable
  EXPECT_TRUE(training::TrainableVariables(root).empty());
  // Each replica writes the all-reduced value to its own copy.
  absl::StatusOr<DistributedStep> run =
      mirrored.Run(scope, [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
        Output mine = ops::Const(ctx.scope(), ctx.replica_id_in_sync_group() + 1.0f);
        Output mean = ctx.AllReduce(ReduceOp::kMean, mine);
        return std::vector<Output>{ops::Assign(ctx.scope(), moving.handle(), mean)};
      });
  ASSERT_TRUE(run.ok()) << run.status();
  Operation init = training::GlobalVariablesInitializer(root);
  absl::StatusOr<std::unique_ptr<Session>> session = SessionFor(root, mirrored);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Run({}, {}, {init.name()}, nullptr).ok());
  const std::vector<std::string> copies = {moving.components()[0].value().name(),
                                           moving.components()[1].value().name()};
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, copies, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 5.0f);
  EXPECT_EQ(out[1].scalar<float>(), 5.0f);
  std::vector<std::string> assigns;
  for (const Output& o : run->outputs[0].values) assigns.push_back(o.name());
  ASSERT_TRUE((*session)->Run({}, assigns, {}, &out).ok());
  ASSERT_TRUE((*session)->Run({}, copies, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 1.5f);
  EXPECT_EQ(out[1].scalar<float>(), 1.5f);
}

TEST(StrategyTest, UnevenGlobalBatchIsAnError) {
  MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"});
  Scope root = Scope::NewRootScope();
  absl::StatusOr<DistributedDataset> d =
      mirrored.ExperimentalDistributeDataset(mirrored.scope(root), Data(3));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("does not split evenly across 2 replicas"), std::string::npos)
      << d.status();
  // 8 rows in batches of 6 over 2 replicas: 3 + 3, then 1 + 1.
  absl::StatusOr<DistributedDataset> ok =
      mirrored.ExperimentalDistributeDataset(mirrored.scope(root), Data(6));
  ASSERT_TRUE(ok.ok()) << ok.status();
  auto it = ok->MakeIterator();
  ASSERT_TRUE(it.ok());
  FeedList feeds;
  bool end = false;
  ASSERT_TRUE((*it)->GetNextFeeds(&feeds, &end).ok());
  ASSERT_EQ(feeds.size(), 4u);  // 2 components x 2 replicas
  EXPECT_EQ(feeds[0].second.dim_size(0), 3);
  ASSERT_TRUE((*it)->GetNextFeeds(&feeds, &end).ok());
  EXPECT_EQ(feeds[0].second.dim_size(0), 1);
  // Over 3 replicas the first batch (6 rows) splits, the last (2 rows) does not.
  MirroredStrategy three({"/device:CPU:0", "/device:CPU:1", "/device:CPU:2"});
  Scope root3 = Scope::NewRootScope();
  absl::StatusOr<DistributedDataset> d3 =
      three.ExperimentalDistributeDataset(three.scope(root3), Data(6));
  ASSERT_TRUE(d3.ok()) << d3.status();
  auto it3 = d3->MakeIterator();
  ASSERT_TRUE(it3.ok());
  ASSERT_TRUE((*it3)->GetNextFeeds(&feeds, &end).ok());
  absl::Status last = (*it3)->GetNextFeeds(&feeds, &end);
  EXPECT_EQ(last.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(last.message().find("a global batch of 2 rows"), std::string::npos) << last;
}

TEST(StrategyTest, PrimaryOnlyVariablesAreAnError) {
  // TrainableVariables() gives the primaries only: replica 1 has no gradient for them.
  MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"});
  Scope root = Scope::NewRootScope();
  Scope scope = mirrored.scope(root);
  training::Variable w(scope, "w", {1}, DT_FLOAT, training::Ones());
  training::GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<DistributedStep> run =
      mirrored.Run(scope, [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
        Output loss = ops::Sum(ctx.scope(), ops::Square(ctx.scope(), w), {0});
        TG_RETURN_IF_ERROR(ctx.Minimize(&sgd, loss, training::TrainableVariables(root)));
        return std::vector<Output>{loss};
      });
  ASSERT_FALSE(run.ok());
  EXPECT_NE(
      run.status().message().find("variable 'w' is only the primary copy of a mirrored variable"),
      std::string::npos)
      << run.status();
}

TEST(StrategyTest, CopiesFollowThePrimarysNameAndCanBeResynced) {
  MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"});
  Scope root = Scope::NewRootScope();
  Scope scope = mirrored.scope(root);
  training::Variable first(scope, "w", {2}, DT_FLOAT, training::Ones());
  training::Variable w(scope, "w", {2}, DT_FLOAT, training::Ones());
  ASSERT_EQ(w.components().size(), 2u);
  EXPECT_EQ(w.name(), "w_1");
  EXPECT_EQ(w.components()[1].name(), "w_1/replica_1");
  // As after a restore: the primary changes, CopyPrimaryToReplicas brings the copy along.
  Output set = ops::Assign(root, w.handle(), ops::Const(root, {5.0f, 6.0f}, TensorShape({2})));
  Operation copy = mirrored.CopyPrimaryToReplicas(root);
  Operation init = training::GlobalVariablesInitializer(root);
  absl::StatusOr<std::unique_ptr<Session>> session = SessionFor(root, mirrored);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, {init.name()}, nullptr).ok());
  ASSERT_TRUE((*session)->Run({}, {set.name()}, {}, &out).ok());
  ASSERT_TRUE((*session)->Run({}, {}, {copy.name()}, nullptr).ok());
  ASSERT_TRUE((*session)->Run({}, {w.components()[1].value().name()}, {}, &out).ok());
  EXPECT_EQ(out[0].data<float>()[0], 5.0f);
  EXPECT_EQ(out[0].data<float>()[1], 6.0f);
}

TEST(StrategyTest, NestedRunAndDestroyedStrategyAreErrors) {
  Scope root = Scope::NewRootScope();
  Scope scope = root;
  {
    MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"});
    scope = mirrored.scope(root);
    absl::StatusOr<DistributedStep> run =
        mirrored.Run(scope, [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
          TG_RETURN_IF_ERROR(mirrored
                                 .Run(scope,
                                      [](ReplicaContext&) -> absl::StatusOr<std::vector<Output>> {
                                        return std::vector<Output>{};
                                      })
                                 .status());
          return std::vector<Output>{};
        });
    ASSERT_FALSE(run.ok());
    EXPECT_NE(run.status().message().find("Run called from inside a step function"),
              std::string::npos)
        << run.status();
  }
  training::Variable late(scope, "late", {1}, DT_FLOAT, training::Ones());
  EXPECT_FALSE(late.valid());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kFailedPrecondition) << root.status();
}

TEST(StrategyTest, ReplicasMustAskForTheSameUpdates) {
  MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"});
  Scope root = Scope::NewRootScope();
  Scope scope = mirrored.scope(root);
  training::Variable w(scope, "w", {1}, DT_FLOAT, training::Ones());
  training::GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<DistributedStep> run =
      mirrored.Run(scope, [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
        Output loss = ops::Sum(ctx.scope(), ops::Square(ctx.scope(), w), {0});
        if (ctx.replica_id_in_sync_group() == 0) TG_RETURN_IF_ERROR(ctx.Minimize(&sgd, loss));
        return std::vector<Output>{loss};
      });
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(run.status().message().find("same Minimize/ApplyGradients calls"), std::string::npos)
      << run.status();
}

TEST(StrategyTest, VariablesMadeInsideAStepFunctionAreAnError) {
  MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"});
  Scope root = Scope::NewRootScope();
  Scope scope = mirrored.scope(root);
  absl::StatusOr<DistributedStep> run =
      mirrored.Run(scope, [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
        training::Variable late(ctx.scope(), "late", {1}, DT_FLOAT, training::Ones());
        TG_RETURN_IF_ERROR(ctx.scope().status());
        return std::vector<Output>{late};
      });
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("variable 'late' is made inside a step function"),
            std::string::npos)
      << run.status();
}

TEST(StrategyTest, InputsNeedOneValuePerReplica) {
  MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"});
  Scope root = Scope::NewRootScope();
  PerReplica one{{ops::Const(root, 1.0f)}};
  absl::StatusOr<DistributedStep> run = mirrored.Run(
      mirrored.scope(root),
      [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> { return ctx.inputs(); },
      {one});
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("input 0 has 1 per-replica values"), std::string::npos)
      << run.status();
}

TEST(StrategyTest, AllReduceInsideTheStepFunction) {
  for (int kind = 0; kind < 2; ++kind) {
    std::unique_ptr<Strategy> strategy;
    const std::vector<std::string> cpus = {"/device:CPU:0", "/device:CPU:1", "/device:CPU:2"};
    if (kind == 0) {
      strategy = std::make_unique<MirroredStrategy>(cpus);
    } else {
      strategy = std::make_unique<CentralStorageStrategy>(cpus);
    }
    Scope root = Scope::NewRootScope();
    absl::StatusOr<DistributedStep> run = strategy->Run(
        strategy->scope(root), [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
          Output mine =
              ops::Const(ctx.scope(), static_cast<float>(ctx.replica_id_in_sync_group() + 1));
          return std::vector<Output>{ctx.AllReduce(ReduceOp::kSum, mine),
                                     ctx.AllReduce(ReduceOp::kMean, mine)};
        });
    ASSERT_TRUE(run.ok()) << run.status();
    absl::StatusOr<std::unique_ptr<Session>> session = SessionFor(root, *strategy);
    ASSERT_TRUE(session.ok()) << session.status();
    std::vector<std::string> fetch;
    for (int k = 0; k < 2; ++k) {
      for (const Output& o : run->outputs[k].values) fetch.push_back(o.name());
    }
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)->Run({}, fetch, {}, &out).ok());
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(out[r].scalar<float>(), 6.0f) << kind << " replica " << r;
      EXPECT_EQ(out[3 + r].scalar<float>(), 2.0f) << kind << " replica " << r;
    }
  }
}

TEST(StrategyTest, ReduceSumsAcrossReplicas) {
  for (int kind = 0; kind < 2; ++kind) {
    std::unique_ptr<Strategy> strategy;
    if (kind == 0) {
      strategy = std::make_unique<MirroredStrategy>(
          std::vector<std::string>{"/device:CPU:0", "/device:CPU:1", "/device:CPU:2"});
    } else {
      strategy = std::make_unique<CentralStorageStrategy>(
          std::vector<std::string>{"/device:CPU:0", "/device:CPU:1", "/device:CPU:2"});
    }
    Scope root = Scope::NewRootScope();
    absl::StatusOr<DistributedStep> run = strategy->Run(
        strategy->scope(root), [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
          return std::vector<Output>{
              ops::Const(ctx.scope(), static_cast<float>(ctx.replica_id_in_sync_group() + 1))};
        });
    ASSERT_TRUE(run.ok()) << run.status();
    Output sum = strategy->Reduce(root, ReduceOp::kSum, run->outputs[0]);
    Output mean = strategy->Reduce(root, ReduceOp::kMean, run->outputs[0]);
    absl::StatusOr<std::unique_ptr<Session>> session = SessionFor(root, *strategy);
    ASSERT_TRUE(session.ok()) << session.status();
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)->Run({}, {sum.name(), mean.name()}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<float>(), 6.0f) << kind;
    EXPECT_EQ(out[1].scalar<float>(), 2.0f) << kind;
  }
}

// reduce(op, value, axis): replica 0 holds rows [1, 2], [3, 4]; replica 1
// holds [5, 6] alone (fewer examples). Along axis 0: the sum [9, 12]; the
// mean over the three rows [3, 4]. Along axis -1: sums per row, then summed
// across replicas as shapes allow, so only axis 0 mixes sizes here.
TEST(StrategyTest, ReduceAlongAnAxis) {
  for (int kind = 0; kind < 3; ++kind) {
    std::unique_ptr<Strategy> strategy;
    const std::vector<std::string> two = {"/device:CPU:0", "/device:CPU:1"};
    if (kind == 0) strategy = std::make_unique<MirroredStrategy>(two);
    if (kind == 1) strategy = std::make_unique<CentralStorageStrategy>(two);
    if (kind == 2) strategy = std::make_unique<OneDeviceStrategy>("/device:CPU:0");
    Scope root = Scope::NewRootScope();
    absl::StatusOr<DistributedStep> run = strategy->Run(
        strategy->scope(root), [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
          if (ctx.replica_id_in_sync_group() == 0) {
            return std::vector<Output>{ops::Const(ctx.scope(), {1.f, 2.f, 3.f, 4.f}, {2, 2})};
          }
          return std::vector<Output>{ops::Const(ctx.scope(), {5.f, 6.f}, {1, 2})};
        });
    ASSERT_TRUE(run.ok()) << run.status();
    Output sum = strategy->Reduce(root, ReduceOp::kSum, run->outputs[0], 0);
    Output mean = strategy->Reduce(root, ReduceOp::kMean, run->outputs[0], 0);
    Output last = strategy->Reduce(root, ReduceOp::kMean, run->outputs[0], -1);
    absl::StatusOr<std::unique_ptr<Session>> session = SessionFor(root, *strategy);
    ASSERT_TRUE(session.ok()) << session.status();
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)->Run({}, {sum.name(), mean.name()}, {}, &out).ok()) << kind;
    if (kind == 2) {  // one replica: replica 0's rows only
      ExpectTensorEqual<float>(out[0], {4, 6}, TensorShape({2}));
      ExpectTensorEqual<float>(out[1], {2, 3}, TensorShape({2}));
    } else {
      ExpectTensorEqual<float>(out[0], {9, 12}, TensorShape({2}));
      ExpectTensorEqual<float>(out[1], {3, 4}, TensorShape({2}));
    }
    if (kind == 2) {
      ASSERT_TRUE((*session)->Run({}, {last.name()}, {}, &out).ok());
      ExpectTensorEqual<float>(out[0], {1.5, 3.5}, TensorShape({2}));  // row means
    }
    // Axis 2 of a matrix fails the build, as in TensorFlow.
    strategy->Reduce(root, ReduceOp::kSum, run->outputs[0], 2);
    EXPECT_STATUS(root.status(), kInvalidArgument, "axis 2 is out of range [-2, 2)");
  }
}

}  // namespace
}  // namespace distribute
}  // namespace tensorgrid
