#include "examples/models/mobilenet_v2.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "client/client_session.h"
#include "client/distribute/strategy.h"
#include "client/ops/standard_ops.h"
#include "client/training/optimizer.h"
#include "core/platform/status_testutil.h"
#include "core/public/session.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace models {
namespace {

int64_t Parameters(const std::vector<training::Variable>& vars) {
  int64_t n = 0;
  for (const training::Variable& v : vars) n += v.shape().num_elements();
  return n;
}

TEST(MobileNetV2Test, ChannelsRoundAsTheReferenceDoes) {
  EXPECT_EQ(ScaledChannels(32, 1.0), 32);
  EXPECT_EQ(ScaledChannels(32, 0.35), 16);  // 11.2 rounds to 8, under 90%: one more 8
  EXPECT_EQ(ScaledChannels(16, 0.35), 8);
  EXPECT_EQ(ScaledChannels(24, 0.5), 16);
  EXPECT_EQ(ScaledChannels(1280, 1.4), 1792);
}

// tf.keras.applications.MobileNetV2(weights=None) on 224×224×3 with 1000
// classes: 3,504,872 trainable parameters and 34,112 moving statistics
// (model.summary()), 158 trainable weights of 262.
TEST(MobileNetV2Test, ThePapersNetworkHasKerassParameters) {
  Scope root = Scope::NewRootScope();
  MobileNetV2Options options;
  options.num_classes = 1000;
  MobileNetV2 net(root, options);
  ASSERT_OK(root.status());
  EXPECT_EQ(net.trainable_variables().size(), 158u);
  EXPECT_EQ(Parameters(net.trainable_variables()), 3504872);
  const std::vector<training::Variable> all = training::GlobalVariables(root);
  EXPECT_EQ(all.size(), 262u);
  EXPECT_EQ(Parameters(all), 3504872 + 34112);
  std::set<std::string> names;
  for (const training::Variable& v : all) names.insert(v.name());
  for (const char* name :
       {"Conv1/kernel", "bn_Conv1/moving_mean", "expanded_conv_depthwise/depthwise_kernel",
        "expanded_conv_project_BN/gamma", "block_1_expand/kernel", "block_16_project_BN/beta",
        "Conv_1/kernel", "Conv_1_bn/moving_variance", "Logits/kernel", "Logits/bias"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
}

TEST(MobileNetV2Test, BadOptionsAreRecordedOnTheScope) {
  MobileNetV2Options options;
  options.alpha = 0;
  Scope root = Scope::NewRootScope();
  MobileNetV2 net(root, options);
  EXPECT_STATUS(root.status(), kInvalidArgument, "alpha 0");
  options = MobileNetV2Options();
  options.stages[2].stride = 3;
  Scope root2 = Scope::NewRootScope();
  MobileNetV2 net2(root2, options);
  EXPECT_STATUS(root2.status(), kInvalidArgument, "stage 2 (t=6, c=32, n=3, s=3)");
}

MobileNetV2Options Small() {
  MobileNetV2Options options;
  options.alpha = 0.35;
  options.input_channels = 1;
  options.first_stride = 1;
  options.stages.resize(2);
  options.last_channels = 64;
  return options;
}

// Eight 12×12 images whose class is where their bright square is.
void Batch(Tensor* images, Tensor* labels) {
  *images = Tensor(DT_FLOAT, TensorShape({8, 12, 12, 1}));
  *labels = Tensor(DT_INT64, TensorShape({8}));
  for (int i = 0; i < 8; ++i) {
    const int label = i % 2;
    labels->data<int64_t>()[i] = label;
    for (int p = 0; p < 144; ++p) {
      const int row = p / 12;
      const bool bright = label == 0 ? row < 6 : row >= 6;
      images->data<float>()[i * 144 + p] = bright ? 1.0f - 0.05f * (p % 5) : 0.1f * (i % 3);
    }
  }
}

TEST(MobileNetV2Test, TrainsAndItsMovingStatisticsFollowTheBatches) {
  Scope root = Scope::NewRootScope();
  MobileNetV2 net(root, Small());
  auto images = ops::Placeholder(root, DT_FLOAT);
  auto labels = ops::Placeholder(root, DT_INT64);
  MobileNetV2::Forward train = net.Apply(root, images, /*training=*/true);
  ASSERT_EQ(train.moving_updates.size(), 2u * 10);  // Conv1, 1 + 2 blocks (2 + 3 + 3), Conv_1
  Operation update = UpdateMovingStatistics(root, train.moving_updates);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(root, train.logits, labels);
  Output loss = ops::Mean(root, xent.loss, {0});
  training::AdamOptimizer adam(0.01);
  absl::StatusOr<Operation> minimize = adam.Minimize(root, loss, net.trainable_variables());
  ASSERT_TRUE(minimize.ok()) << minimize.status();
  Output eval_logits = net.Apply(root, images, /*training=*/false).logits;
  ASSERT_OK(root.status());
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({}, {}, {training::GlobalVariablesInitializer(root)}, &out));
  Tensor x, y;
  Batch(&x, &y);
  std::vector<float> losses;
  for (int step = 0; step < 30; ++step) {
    ASSERT_OK(session.Run({{images, x}, {labels, y}}, {loss}, {*minimize, update}, &out));
    losses.push_back(out[0].scalar<float>());
  }
  EXPECT_LT(losses.back(), 0.5f * losses.front()) << losses.front() << " -> " << losses.back();
  // The first batch norm's moving mean moved from 0 towards the batch means.
  const training::Variable moving = train.moving_updates[0].variable;
  ASSERT_OK(session.Run({moving.value()}, &out));
  double sum = 0;
  for (int64_t i = 0; i < out[0].NumElements(); ++i) sum += std::abs(out[0].data<float>()[i]);
  EXPECT_GT(sum, 0);
  // Inference mode runs on the moving statistics.
  ASSERT_OK(session.Run({{images, x}}, {eval_logits}, &out));
  EXPECT_EQ(out[0].shape(), TensorShape({8, 10}));
}

TEST(MobileNetV2Test, MirroredReplicasKeepTheSameMovingStatistics) {
  distribute::MirroredStrategy mirrored({"/device:CPU:0", "/device:CPU:1"});
  Scope root = Scope::NewRootScope();
  Scope scope = mirrored.scope(root);
  MobileNetV2 net(scope, Small());
  Tensor x, y;
  Batch(&x, &y);
  training::GradientDescentOptimizer sgd(0.01);
  std::vector<training::Variable> moving;  // the (mirrored) moving statistics
  absl::StatusOr<distribute::DistributedStep> step = mirrored.Run(
      scope, [&](distribute::ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
        const Scope& s = ctx.scope();
        // Each replica its own half: different batch statistics.
        Output half = ops::Slice(s, ops::Const(s, x), {4 * ctx.replica_id_in_sync_group(), 0, 0, 0},
                                 {4, 12, 12, 1});
        MobileNetV2::Forward f = net.Apply(s, half, /*training=*/true);
        if (ctx.replica_id_in_sync_group() == 0) {
          for (const MovingUpdate& u : f.moving_updates) moving.push_back(u.variable);
        }
        Operation update = UpdateMovingStatistics(s, f.moving_updates, [&](const Output& v) {
          return ctx.AllReduce(distribute::ReduceOp::kMean, v);
        });
        Output loss = ops::Mean(s, f.logits, {0, 1});
        TG_RETURN_IF_ERROR(ctx.Minimize(&sgd, loss, net.trainable_variables()));
        return std::vector<Output>{ops::Identity(s.WithControlDependencies({update}), loss)};
      });
  ASSERT_TRUE(step.ok()) << step.status();
  const Operation init = training::GlobalVariablesInitializer(root);
  ASSERT_OK(root.status());
  GraphDef graph;
  ASSERT_OK(root.ToGraphDef(&graph));
  SessionOptions options;
  options.config = mirrored.session_config();
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_OK((*session)->Create(graph));
  ASSERT_OK((*session)->Run({}, {}, {init.name()}, nullptr));
  std::vector<std::string> fetch;
  for (const Output& o : step->outputs[0].values) fetch.push_back(o.name());
  std::vector<Tensor> losses;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK((*session)->Run({}, fetch, {step->train_op.name()}, &losses));
  }
  // Every moving statistic: two copies, bit-identical.
  ASSERT_EQ(moving.size(), 20u);
  for (const training::Variable& v : moving) {
    ASSERT_EQ(v.components().size(), 2u) << v.name();
    std::vector<Tensor> out;
    ASSERT_OK((*session)->Run(
        {}, {v.components()[0].value().name(), v.components()[1].value().name()}, {}, &out));
    EXPECT_EQ(out[0].DebugString(1000), out[1].DebugString(1000)) << v.name();
  }
}

}  // namespace
}  // namespace models
}  // namespace tensorgrid
