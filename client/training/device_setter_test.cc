// ReplicaDeviceSetter: the devices it asks for, read back from the NodeDefs.
// (Where nodes end up is the Placer's business: it later pulls each Assign,
// read and update onto its variable's device, whatever they ask for here.)
#include "client/training/device_setter.h"

#include <string>
#include <vector>

#include "client/ops/standard_ops.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

class DeviceSetterTest : public ::testing::Test {
 protected:
  // The requested device of node `name`.
  std::string DeviceOf(const std::string& name) {
    GraphDef graph;
    absl::Status s = root_.ToGraphDef(&graph);
    EXPECT_TRUE(s.ok()) << s;
    for (const NodeDef& node : graph.node()) {
      if (node.name() == name) return node.device();
    }
    ADD_FAILURE() << "no node " << name;
    return "";
  }
  Scope WithSetter(const ReplicaDeviceSetterOptions& options) {
    return root_.WithDeviceFunction(ReplicaDeviceSetter(options));
  }
  // A float variable named `name`.
  ops::Variable Var(const Scope& scope, const std::string& name,
                    const PartialTensorShape& shape = {2, 2}) {
    return ops::Variable(scope.WithOpName(name), shape, DT_FLOAT);
  }

  Scope root_ = Scope::NewRootScope();
};

ReplicaDeviceSetterOptions TwoPsTasks() {
  ReplicaDeviceSetterOptions options;
  options.ps_tasks = 2;
  return options;
}

TEST_F(DeviceSetterTest, VariablesRoundRobinOverPsTasksOtherOpsOnWorker) {
  Scope s = WithSetter(TwoPsTasks());
  std::vector<ops::Variable> vars;
  for (const char* name : {"w0", "w1", "w2", "w3"}) vars.push_back(Var(s, name));
  ops::Assign(s.WithOpName("w0/init"), vars[0], {{1.f, 2.f}, {3.f, 4.f}});
  ops::MatMul(s.WithOpName("product"), vars[1], vars[2]);
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(DeviceOf("w0"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf("w1"), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf("w2"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf("w3"), "/job:ps/task:1");
  // Assign asks for the worker; the Placer colocates it with w0 on ps/task:0.
  EXPECT_EQ(DeviceOf("w0/init"), "/job:worker");
  EXPECT_EQ(DeviceOf("Const"), "/job:worker");  // Assign's literal value
  EXPECT_EQ(DeviceOf("product"), "/job:worker");
}

TEST_F(DeviceSetterTest, ResourceVariablesGoToPsToo) {
  Scope s = WithSetter(TwoPsTasks());
  auto a = ops::VarHandleOp(s.WithOpName("a"), DT_FLOAT, {2});
  auto b = ops::VarHandleOp(s.WithOpName("b"), DT_FLOAT, {2});
  ops::AssignVariableOp(s.WithOpName("a/set"), a, {1.f, 2.f});
  ops::ReadVariableOp(s.WithOpName("b/read"), b, DT_FLOAT);
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(DeviceOf("a"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf("b"), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf("a/set"), "/job:worker");
  EXPECT_EQ(DeviceOf("b/read"), "/job:worker");
}

TEST_F(DeviceSetterTest, WorkerDeviceMayNameATask) {
  ReplicaDeviceSetterOptions options = TwoPsTasks();
  options.ps_device = "/job:ps/device:CPU:0";
  options.worker_device = "/job:worker/task:3";
  Scope s = WithSetter(options);
  auto w = Var(s, "w");
  ops::Identity(s.WithOpName("y"), w);
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(DeviceOf("w"), "/job:ps/task:0/device:CPU:0");
  EXPECT_EQ(DeviceOf("y"), "/job:worker/task:3");
}

TEST_F(DeviceSetterTest, NoPsTasksPutsEverythingOnTheWorker) {
  ReplicaDeviceSetterOptions options;
  options.worker_device = "/job:worker/task:1";
  Scope s = WithSetter(options);
  auto w = Var(s, "w");
  ops::Identity(s.WithOpName("y"), w);
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(DeviceOf("w"), "/job:worker/task:1");
  EXPECT_EQ(DeviceOf("y"), "/job:worker/task:1");
}

TEST_F(DeviceSetterTest, GreedyPutsTheBigVariableAloneUntilBalanced) {
  ReplicaDeviceSetterOptions options = TwoPsTasks();
  options.ps_strategy = GreedyLoadBalancingStrategy(2);
  Scope s = WithSetter(options);
  Var(s, "big", {1000});                                                    // 4000 bytes
  for (int i = 0; i < 11; ++i) Var(s, "small" + std::to_string(i), {100});  // 400 each
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(DeviceOf("big"), "/job:ps/task:0");
  // Ten small ones bring task 1 to 4000 bytes too; on the tie, task 0.
  for (int i = 0; i < 10; ++i) EXPECT_EQ(DeviceOf("small" + std::to_string(i)), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf("small10"), "/job:ps/task:0");
}

TEST_F(DeviceSetterTest, GreedyTakesAnyLoadFunction) {
  ReplicaDeviceSetterOptions options;
  options.ps_tasks = 3;
  // Every variable weighs the same: the greedy strategy is then round-robin.
  options.ps_strategy = GreedyLoadBalancingStrategy(3, [](const NodeDef&) { return 1; });
  Scope s = WithSetter(options);
  for (const char* name : {"a", "b", "c", "d"}) Var(s, name, {1000 * (name[0] - 'a' + 1)});
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(DeviceOf("a"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf("b"), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf("c"), "/job:ps/task:2");
  EXPECT_EQ(DeviceOf("d"), "/job:ps/task:0");
}

TEST(ByteSizeLoadFunctionTest, CountsUnknownsAsOne) {
  Scope root = Scope::NewRootScope();
  ops::Variable(root.WithOpName("known"), {1000}, DT_FLOAT);
  ops::Variable(root.WithOpName("partial"), {-1, 10}, DT_INT64);
  ops::Variable(root.WithOpName("unknown_rank"), PartialTensorShape(), DT_DOUBLE);
  ops::Variable(root.WithOpName("strings"), {3}, DT_STRING);
  ops::VarHandleOp(root.WithOpName("handle"), DT_FLOAT, {2, 3});
  GraphDef graph;
  ASSERT_TRUE(root.ToGraphDef(&graph).ok()) << root.status();
  std::vector<int64_t> bytes;
  for (const NodeDef& node : graph.node()) bytes.push_back(ByteSizeLoadFunction(node));
  EXPECT_EQ(bytes, (std::vector<int64_t>{4000, 80, 8, 3, 24}));
}

TEST_F(DeviceSetterTest, CustomStrategyChoosesTheTask) {
  ReplicaDeviceSetterOptions options;
  options.ps_tasks = 4;
  options.ps_strategy = [](const NodeDef& node) { return node.name() == "embedding" ? 3 : 1; };
  Scope s = WithSetter(options);
  Var(s, "embedding");
  Var(s, "bias");
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(DeviceOf("embedding"), "/job:ps/task:3");
  EXPECT_EQ(DeviceOf("bias"), "/job:ps/task:1");
}

TEST_F(DeviceSetterTest, StrategyOutOfRangeFailsTheNode) {
  ReplicaDeviceSetterOptions options = TwoPsTasks();
  options.ps_strategy = [](const NodeDef&) { return 2; };
  Var(WithSetter(options), "w");
  EXPECT_EQ(root_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(root_.status().message().find("node 'w' (VariableV2)"), std::string::npos)
      << root_.status();
  EXPECT_NE(root_.status().message().find("ps_strategy chose task 2, but ps_tasks is 2"),
            std::string::npos)
      << root_.status();
}

TEST_F(DeviceSetterTest, InnerRequestForAWorkerTaskWins) {
  Scope s = WithSetter(TwoPsTasks());
  Scope task1 = s.WithDevice("/job:worker/task:1");
  Var(task1, "local");  // asks for another job: stays there, consumes no ps task
  ops::Identity(task1.WithOpName("y"), 1.f);
  Var(s, "w");
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(DeviceOf("local"), "/job:worker/task:1");
  EXPECT_EQ(DeviceOf("y"), "/job:worker/task:1");
  EXPECT_EQ(DeviceOf("w"), "/job:ps/task:0");
}

TEST_F(DeviceSetterTest, InnerDeviceTypeAndIdMergeIn) {
  Scope s = WithSetter(TwoPsTasks()).WithDevice("/device:CPU:1");
  auto w = Var(s, "w");
  ops::Identity(s.WithOpName("y"), w);
  Var(s.WithDevice("/job:ps/task:1"), "pinned");  // a ps task of its own choosing
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(DeviceOf("w"), "/job:ps/task:0/device:CPU:1");
  EXPECT_EQ(DeviceOf("y"), "/job:worker/device:CPU:1");
  EXPECT_EQ(DeviceOf("pinned"), "/job:ps/task:1");
}

TEST_F(DeviceSetterTest, WithoutMergeAnExplicitRequestIsKeptAsIs) {
  ReplicaDeviceSetterOptions options = TwoPsTasks();
  options.merge_devices = false;
  Scope s = WithSetter(options);
  Var(s.WithDevice("/device:CPU:1"), "asked");
  Var(s, "w");
  ASSERT_TRUE(root_.ok()) << root_.status();
  // The Scope still lays the node's own request over the setter's answer,
  // which is that request.
  EXPECT_EQ(DeviceOf("asked"), "/device:CPU:1");
  EXPECT_EQ(DeviceOf("w"), "/job:ps/task:0");  // "asked" consumed no ps task
}

TEST_F(DeviceSetterTest, OneSetterIsOneSequence) {
  DeviceFunction setter = ReplicaDeviceSetter(TwoPsTasks());
  Scope a = root_.NewSubScope("a").WithDeviceFunction(setter);
  Scope b = root_.NewSubScope("b").WithDeviceFunction(setter);
  Var(a, "w");
  Var(b, "w");  // the same counter: the next task
  Var(root_.WithDeviceFunction(ReplicaDeviceSetter(TwoPsTasks())), "fresh");
  ASSERT_TRUE(root_.ok()) << root_.status();
  EXPECT_EQ(DeviceOf("a/w"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf("b/w"), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf("fresh"), "/job:ps/task:0");
}

TEST_F(DeviceSetterTest, MalformedPsDeviceFailsTheFirstPsOp) {
  ReplicaDeviceSetterOptions options = TwoPsTasks();
  options.ps_device = "/job:ps/task:x";
  Scope s = WithSetter(options);
  ops::Identity(s.WithOpName("y"), 1.f);
  ASSERT_TRUE(root_.ok()) << root_.status();
  Var(s, "w");
  EXPECT_EQ(root_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(root_.status().message().find("device name '/job:ps/task:x' is malformed"),
            std::string::npos)
      << root_.status();
}

}  // namespace
}  // namespace tensorgrid
