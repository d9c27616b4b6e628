// Scope::WithDeviceFunction: the rule that combines device functions with
// WithDevice requests (see scope.h), and a real run on two CPU devices.
#include <string>
#include <vector>

#include "client/client_session.h"
#include "client/merge_device.h"
#include "client/ops/standard_ops.h"
#include "client/scope.h"
#include "core/framework/attr_value_util.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

NodeDef Node(const Scope& scope, const std::string& name) {
  GraphDef graph;
  absl::Status s = scope.ToGraphDef(&graph);
  EXPECT_TRUE(s.ok()) << s;
  for (const NodeDef& node : graph.node()) {
    if (node.name() == name) return node;
  }
  ADD_FAILURE() << "no node " << name;
  return NodeDef();
}

// A device function that always answers `device`.
DeviceFunction Always(std::string device) {
  return [device](const NodeDef&) { return device; };
}

void ExpectError(const Scope& scope, const std::string& substring) {
  EXPECT_EQ(scope.status().code(), absl::StatusCode::kInvalidArgument) << scope.status();
  EXPECT_NE(scope.status().message().find(substring), std::string::npos) << scope.status();
}

TEST(MergeDeviceTest, RequestWinsEachPartBaseFillsTheRest) {
  EXPECT_EQ(*MergeDevice("/job:ps/task:0", "/device:CPU:1"), "/job:ps/task:0/device:CPU:1");
  EXPECT_EQ(*MergeDevice("/job:worker/task:0", "/task:1"), "/job:worker/task:1");
  EXPECT_EQ(*MergeDevice("/job:ps/task:3", "/job:worker"), "/job:worker/task:3");
  EXPECT_EQ(*MergeDevice("/device:GPU:0", "/cpu:1"), "/device:CPU:1");
  EXPECT_EQ(*MergeDevice("", ""), "");
  absl::StatusOr<std::string> bad = MergeDevice("/job:ps", "job:worker");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'job:worker' is malformed"), std::string::npos);
}

TEST(DeviceFunctionTest, SeesTheFinishedNodeAndChoosesItsDevice) {
  Scope root = Scope::NewRootScope();
  std::vector<NodeDef> seen;
  Scope s = root.WithDeviceFunction([&seen](const NodeDef& node) {
    seen.push_back(node);
    return node.op() == "VariableV2" ? "/job:ps/task:0" : "/job:worker";
  });
  EXPECT_EQ(s.device(), "");
  auto v = ops::Variable(s.WithOpName("v"), {2}, DT_FLOAT);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto y = ops::Mul(s.WithOpName("y").WithDevice("/task:1"), v, x);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(Node(root, "v").device(), "/job:ps/task:0");
  EXPECT_EQ(Node(root, "x").device(), "");  // built outside the function's scope
  EXPECT_EQ(Node(root, "y").device(), "/job:worker/task:1");
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(HasNodeAttr(seen[0], "container"));  // attr defaults are filled in
  EXPECT_EQ(seen[1].name(), "y");
  EXPECT_EQ(seen[1].input_size(), 2);
  EXPECT_EQ(seen[1].device(), "/task:1");  // the request made inside the function
}

TEST(DeviceFunctionTest, InnerRequestRefinesTheFunctionsChoice) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction(Always("/job:worker/task:0"));
  ops::Placeholder(s.WithOpName("plain"), DT_FLOAT);
  ops::Placeholder(s.WithDevice("/job:worker/task:1").WithOpName("task1"), DT_FLOAT);
  ops::Placeholder(s.WithDevice("/device:CPU:1").WithOpName("cpu1"), DT_FLOAT);
  ops::Placeholder(s.WithDevice("/job:ps").WithOpName("ps"), DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(Node(root, "plain").device(), "/job:worker/task:0");
  EXPECT_EQ(Node(root, "task1").device(), "/job:worker/task:1");
  EXPECT_EQ(Node(root, "cpu1").device(), "/job:worker/task:0/device:CPU:1");
  EXPECT_EQ(Node(root, "ps").device(), "/job:ps/task:0");
}

TEST(DeviceFunctionTest, NestedFunctionsApplyInnermostFirst) {
  Scope root = Scope::NewRootScope();
  std::vector<std::string> calls;
  Scope outer = root.WithDeviceFunction([&calls](const NodeDef& node) {
    calls.push_back("outer sees '" + node.device() + "'");
    return std::string("/job:a/task:0/device:CPU:0");
  });
  Scope inner = outer.WithDeviceFunction([&calls](const NodeDef& node) {
    calls.push_back("inner sees '" + node.device() + "'");
    return std::string("/job:b/device:CPU:1");
  });
  ops::Placeholder(inner.WithOpName("p"), DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(calls, (std::vector<std::string>{"inner sees ''", "outer sees '/job:b/device:CPU:1'"}));
  EXPECT_EQ(Node(root, "p").device(), "/job:b/task:0/device:CPU:1");
}

TEST(DeviceFunctionTest, RequestsBeforeAFunctionFillInAfterIt) {
  Scope root = Scope::NewRootScope();
  std::string seen = "not called";
  Scope s = root.WithDevice("/job:worker/task:3/device:CPU:0")
                .WithDeviceFunction([&seen](const NodeDef& node) {
                  seen = node.device();
                  return std::string("/job:ps");
                });
  ops::Placeholder(s.WithOpName("p"), DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(seen, "");  // the function does not see requests made outside it
  EXPECT_EQ(Node(root, "p").device(), "/job:ps/task:3/device:CPU:0");
}

TEST(DeviceFunctionTest, WithDeviceReplacesOnlyWithinOneFunction) {
  Scope root = Scope::NewRootScope();
  ops::Placeholder(root.WithDevice("/job:a").WithDevice("/cpu:0").WithOpName("replaced"), DT_FLOAT);
  ops::Placeholder(root.WithDevice("/job:a")
                       .WithDeviceFunction(Always(""))
                       .WithDevice("/cpu:0")
                       .WithOpName("merged"),
                   DT_FLOAT);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(Node(root, "replaced").device(), "/cpu:0");  // verbatim: no function
  EXPECT_EQ(Node(root, "merged").device(), "/job:a/device:CPU:0");
}

TEST(DeviceFunctionTest, LiteralInputsGoThroughTheFunction) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction(Always("/job:worker"));
  ops::Mul(s.WithOpName("m"), 1.f, 2.f);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(Node(root, "Const").device(), "/job:worker");
  EXPECT_EQ(Node(root, "m").device(), "/job:worker");
}

TEST(DeviceFunctionTest, ColocatedNodesSkipDeviceFunctions) {
  Scope root = Scope::NewRootScope();
  int calls = 0;
  Scope s = root.WithDeviceFunction([&calls](const NodeDef&) {
    ++calls;
    return std::string("/job:worker");
  });
  auto v = ops::Variable(root.WithOpName("v").WithDevice("/job:ps"), {2}, DT_FLOAT);
  ops::Identity(s.ColocateWith(v).WithOpName("read"), v);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(Node(root, "read").device(), "");
}

TEST(DeviceFunctionTest, MalformedResultFailsTheNode) {
  Scope root = Scope::NewRootScope();
  auto p = ops::Placeholder(root.WithDeviceFunction(Always("job:ps")).WithOpName("p"), DT_FLOAT);
  EXPECT_FALSE(p.output.valid());
  ExpectError(root, "node 'p' (Placeholder)");
  ExpectError(root, "device name 'job:ps' is malformed");
}

TEST(DeviceFunctionTest, MalformedRequestUnderAFunctionFailsTheNode) {
  Scope root = Scope::NewRootScope();
  ops::Placeholder(root.WithDeviceFunction(Always("/job:ps")).WithDevice("/task:x").WithOpName("p"),
                   DT_FLOAT);
  ExpectError(root, "node 'p' (Placeholder)");
  ExpectError(root, "task must be a non-negative integer, got 'x'");
}

TEST(DeviceFunctionTest, EmptyFunctionIsAnError) {
  Scope root = Scope::NewRootScope();
  root.WithDeviceFunction(DeviceFunction());
  ExpectError(root, "WithDeviceFunction: an empty function");
}

// End to end: the function's choice survives placement and partitioning.
TEST(DeviceFunctionTest, VariableRunsOnTheDeviceTheFunctionChose) {
  constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:";
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction([](const NodeDef& node) {
    return node.op() == "VariableV2" ? "/device:CPU:1" : "/device:CPU:0";
  });
  auto v = ops::Variable(s.WithOpName("v"), {2}, DT_FLOAT);
  auto init = ops::Assign(s.WithOpName("init"), v, {1.f, 2.f});
  auto doubled = ops::Mul(s.WithOpName("doubled"), v, 2.f);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(Node(root, "init").device(), "/device:CPU:0");  // the Placer moves it to v

  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 2;
  ClientSession session(root, options);
  RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  // The device of node `name` in the partitions of the last run.
  auto placed = [](const RunMetadata& metadata, const std::string& name) {
    for (const GraphDef& partition : metadata.partition_graphs()) {
      for (const NodeDef& node : partition.node()) {
        if (node.name() == name) return node.device();
      }
    }
    return std::string("nowhere");
  };
  std::vector<Tensor> out;
  RunMetadata init_metadata;
  absl::Status st = session.Run(run_options, {}, {}, {init.operation}, &out, &init_metadata);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(placed(init_metadata, "v"), std::string(kCpu) + "1");
  EXPECT_EQ(placed(init_metadata, "init"), std::string(kCpu) + "1");  // pulled onto v's device

  RunMetadata metadata;
  st = session.Run(run_options, {}, {doubled}, {}, &out, &metadata);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::vector<float>(out[0].data<float>(), out[0].data<float>() + 2),
            (std::vector<float>{2.f, 4.f}));
  EXPECT_EQ(metadata.partition_graphs_size(), 2);
  EXPECT_EQ(placed(metadata, "v"), std::string(kCpu) + "1");
  EXPECT_EQ(placed(metadata, "doubled"), std::string(kCpu) + "0");
  int recvs = 0;
  for (const GraphDef& partition : metadata.partition_graphs()) {
    for (const NodeDef& node : partition.node()) recvs += node.op() == "_Recv";
  }
  EXPECT_GE(recvs, 1);  // v's value crosses from CPU:1 to CPU:0
}

}  // namespace
}  // namespace tensorgrid
