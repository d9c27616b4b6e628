// training::Variable, the registry, GlobalVariablesInitializer and
// ReportUninitializedVariables.
#include "client/training/variables.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "client/training/device_setter.h"
#include "core/framework/attr_value_util.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace training {
namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:";

const NodeDef* FindNode(const GraphDef& graph, const std::string& name) {
  for (const NodeDef& n : graph.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

std::vector<std::string> Names(const std::vector<Variable>& vars) {
  std::vector<std::string> names;
  for (const Variable& v : vars) names.push_back(v.name());
  return names;
}

std::vector<std::string> Strings(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DT_STRING);
  std::vector<std::string> out(t.data<std::string>(), t.data<std::string>() + t.NumElements());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Classes(const NodeDef& node) {
  std::vector<std::string> classes;
  if (HasNodeAttr(node, "_class")) EXPECT_OK(GetNodeAttr(node, "_class", &classes));
  return classes;
}

TEST(VariablesTest, BuildsTensorFlowNamesColocatedWithTheVariable) {
  Scope root = Scope::NewRootScope();
  Variable w(root, "w", {2, 3}, DT_FLOAT, RandomUniform(-1, 1, 1));
  VariableOptions resource;
  resource.use_resource = true;
  Variable r(root.NewSubScope("layer"), "r", {4}, DT_DOUBLE, Zeros(), resource);
  ASSERT_OK(root.status());
  GraphDef graph;
  ASSERT_OK(root.ToGraphDef(&graph));

  EXPECT_EQ(w.name(), "w");
  EXPECT_EQ(w.dtype(), DT_FLOAT);
  EXPECT_EQ(w.shape(), TensorShape({2, 3}));
  EXPECT_FALSE(w.is_resource());
  EXPECT_TRUE(w.trainable());
  EXPECT_EQ(w.handle().type(), DT_FLOAT_REF);
  EXPECT_EQ(w.value(), w.handle());
  EXPECT_EQ(w.initializer().name(), "w/Assign");
  ASSERT_NE(FindNode(graph, "w"), nullptr);
  EXPECT_EQ(FindNode(graph, "w")->op(), "VariableV2");
  EXPECT_EQ(FindNode(graph, "w/Assign")->op(), "Assign");
  const NodeDef* random = FindNode(graph, "w/Initializer/random_uniform/RandomUniform");
  ASSERT_NE(random, nullptr);
  EXPECT_EQ(Classes(*random), std::vector<std::string>{"loc:@w"});
  EXPECT_EQ(Classes(*FindNode(graph, "w/Assign")), std::vector<std::string>{"loc:@w"});

  EXPECT_EQ(r.name(), "layer/r");
  EXPECT_TRUE(r.is_resource());
  EXPECT_EQ(r.handle().type(), DT_RESOURCE);
  EXPECT_EQ(r.value().name(), "layer/r/Read/ReadVariableOp:0");
  EXPECT_EQ(r.value().type(), DT_DOUBLE);
  EXPECT_EQ(FindNode(graph, "layer/r")->op(), "VarHandleOp");
  EXPECT_EQ(FindNode(graph, "layer/r/Assign")->op(), "AssignVariableOp");
  EXPECT_EQ(Classes(*FindNode(graph, "layer/r/Read/ReadVariableOp")),
            std::vector<std::string>{"loc:@layer/r"});
}

TEST(VariablesTest, NamesAreMadeUnique) {
  Scope root = Scope::NewRootScope();
  auto plain = ops::Variable(root.WithOpName("x"), {1}, DT_FLOAT);
  Variable a(root, "w", {1}, DT_FLOAT, Zeros());
  Variable b(root, "w", {1}, DT_FLOAT, Zeros());
  Variable c(root, "x", {1}, DT_FLOAT, Zeros());
  ASSERT_OK(root.status());
  EXPECT_EQ(a.name(), "w");
  EXPECT_EQ(b.name(), "w_1");
  EXPECT_EQ(b.initializer().name(), "w_1/Assign");
  EXPECT_EQ(c.name(), "x_1");
}

TEST(VariablesTest, ScopeControlDependenciesDoNotApply) {
  Scope root = Scope::NewRootScope();
  auto gate = ops::NoOp(root);
  Variable w(root.WithControlDependencies({gate.operation}), "w", {1}, DT_FLOAT, Ones());
  GraphDef graph;
  ASSERT_OK(root.ToGraphDef(&graph));
  for (const NodeDef& n : graph.node()) {
    for (const std::string& in : n.input()) EXPECT_NE(in, "^NoOp") << n.name();
  }
}

TEST(VariablesTest, CollectionsInCreationOrder) {
  Scope root = Scope::NewRootScope();
  Variable a(root, "a", {1}, DT_FLOAT, Zeros());
  VariableOptions frozen;
  frozen.trainable = false;
  frozen.collections = {"mine"};
  Variable b(root.NewSubScope("s"), "b", {1}, DT_FLOAT, Zeros(), frozen);
  VariableOptions resource;
  resource.use_resource = true;
  Variable c(root, "c", {2}, DT_INT32, Constant(3), resource);
  auto unregistered = ops::Variable(root.WithOpName("plain"), {1}, DT_FLOAT);
  ASSERT_OK(root.status());

  EXPECT_EQ(Names(GlobalVariables(root)), (std::vector<std::string>{"a", "s/b", "c"}));
  EXPECT_EQ(Names(TrainableVariables(root)), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(Names(GetCollection(root.NewSubScope("other"), "mine")),
            std::vector<std::string>{"s/b"});
  // What the registry gives back matches what was built.
  const Variable c2 = GlobalVariables(root)[2];
  EXPECT_EQ(c2.handle(), c.handle());
  EXPECT_EQ(c2.value(), c.value());
  EXPECT_EQ(c2.initializer(), c.initializer());
  EXPECT_EQ(c2.shape(), TensorShape({2}));
  EXPECT_EQ(c2.dtype(), DT_INT32);
  EXPECT_TRUE(c2.is_resource());
  EXPECT_FALSE(GlobalVariables(root)[1].trainable());
}

TEST(VariablesTest, GlobalVariablesInitializerAndReport) {
  Scope root = Scope::NewRootScope();
  Variable a(root, "a", {2}, DT_FLOAT, Constant(1.5));
  VariableOptions resource;
  resource.use_resource = true;
  Variable b(root, "b", {}, DT_INT64, Constant(7), resource);
  Variable c(root, "c", {3}, DT_DOUBLE, Ones());
  Output report = ReportUninitializedVariables(root);
  Operation init = GlobalVariablesInitializer(root);
  ASSERT_OK(root.status());
  EXPECT_EQ(init.name(), "init");

  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({report}, &out));
  EXPECT_EQ(Strings(out[0]), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_STATUS(session.Run({c.value()}, &out), kFailedPrecondition,
                "attempting to use uninitialized variable 'c'");

  ASSERT_OK(session.Run({}, {}, {c.initializer()}, nullptr));
  ASSERT_OK(session.Run({report}, &out));
  EXPECT_EQ(Strings(out[0]), (std::vector<std::string>{"a", "b"}));

  ASSERT_OK(session.Run({}, {}, {init}, nullptr));
  ASSERT_OK(session.Run({report, a.value(), b.value(), c.value()}, &out));
  EXPECT_EQ(out[0].shape(), TensorShape({0}));
  ExpectTensorEqual<float>(out[1], {1.5f, 1.5f}, TensorShape({2}));
  ExpectTensorEqual<int64_t>(out[2], {7}, TensorShape({}));
  ExpectTensorEqual<double>(out[3], {1, 1, 1}, TensorShape({3}));
}

TEST(VariablesTest, EmptyGraph) {
  Scope root = Scope::NewRootScope();
  Operation init = GlobalVariablesInitializer(root);
  Output report = ReportUninitializedVariables(root);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({}, {report}, {init}, &out));
  EXPECT_EQ(out[0].dtype(), DT_STRING);
  EXPECT_EQ(out[0].shape(), TensorShape({0}));
}

TEST(VariablesTest, ErrorsGoOnTheScope) {
  Scope root = Scope::NewRootScope();
  Variable v(root, "v", {2}, DT_FLOAT, Zeros());
  auto plain = ops::Variable(root.WithOpName("clash/Assign"), {1}, DT_FLOAT);
  Variable clash(root, "clash", {1}, DT_FLOAT, Zeros());  // its initializer's name is taken
  EXPECT_FALSE(clash.valid());
  EXPECT_STATUS(root.status(), kInvalidArgument, "duplicate node name 'clash/Assign'");
  EXPECT_TRUE(GlobalVariables(root).empty());
}

// Under a device function that puts variables on CPU:1 (a stand-in for a ps
// task) and everything else on CPU:0, each variable's initializer and its
// initialization check run on CPU:1 too.
TEST(VariablesTest, InitializersRunOnTheVariablesDevice) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction([](const NodeDef& node) {
    return node.op() == "VariableV2" || node.op() == "VarHandleOp" ? "/device:CPU:1"
                                                                   : "/device:CPU:0";
  });
  Variable w(s, "w", {2}, DT_FLOAT, TruncatedNormal(0, 1, 5));
  VariableOptions resource;
  resource.use_resource = true;
  Variable r(s, "r", {2}, DT_FLOAT, Ones(), resource);
  Output report = ReportUninitializedVariables(s);
  Operation init = GlobalVariablesInitializer(s);
  ASSERT_OK(root.status());

  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 2;
  ClientSession session(root, options);
  RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> out;
  ASSERT_OK(session.Run(run_options, {}, {report}, {init}, &out, &metadata));
  std::map<std::string, std::string> device;
  int checks = 0;
  for (const GraphDef& partition : metadata.partition_graphs()) {
    for (const NodeDef& node : partition.node()) {
      device[node.name()] = node.device();
      if (node.op() == "IsVariableInitialized" || node.op() == "VarIsInitializedOp") {
        EXPECT_EQ(node.device(), std::string(kCpu) + "1") << node.name();
        ++checks;
      }
    }
  }
  const std::string cpu1 = std::string(kCpu) + "1";
  EXPECT_EQ(device["w"], cpu1);
  EXPECT_EQ(device["w/Initializer/truncated_normal/TruncatedNormal"], cpu1);
  EXPECT_EQ(device["w/Assign"], cpu1);
  EXPECT_EQ(device["r/Assign"], cpu1);
  EXPECT_EQ(device["init"], std::string(kCpu) + "0");
  EXPECT_EQ(checks, 2);
}

TEST(VariablesTest, ReplicaDeviceSetterPutsTheVariableOnThePs) {
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions options;
  options.ps_tasks = 2;
  Scope s = root.WithDeviceFunction(ReplicaDeviceSetter(options));
  Variable a(s, "a", {2}, DT_FLOAT, GlorotUniform(1));
  Variable b(s, "b", {2}, DT_FLOAT, Zeros());
  GraphDef graph;
  ASSERT_OK(root.ToGraphDef(&graph));
  EXPECT_EQ(FindNode(graph, "a")->device(), "/job:ps/task:0");
  EXPECT_EQ(FindNode(graph, "b")->device(), "/job:ps/task:1");
  // Its initializer ops skip the setter: their colocation decides.
  EXPECT_EQ(FindNode(graph, "b/Assign")->device(), "");
  EXPECT_EQ(Classes(*FindNode(graph, "b/Assign")), std::vector<std::string>{"loc:@b"});
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
