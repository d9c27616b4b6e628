#include "core/runtime/placer.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/framework/attr_value_util.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {

// Test-only ops: one with CPU and (fake) GPU kernels, one with a CPU kernel
// only, one with no kernel.
TG_REGISTER_OP("TestCpuAndGpu").Output("out: float");
TG_REGISTER_OP("TestCpuOnly").Output("out: float");
TG_REGISTER_OP("TestNoKernel").Output("out: float");

namespace {

class NothingOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext&) override { return absl::OkStatus(); }
};
TG_REGISTER_KERNEL(KernelDefBuilder("TestCpuAndGpu").Device(DEVICE_CPU), NothingOp);
TG_REGISTER_KERNEL(KernelDefBuilder("TestCpuAndGpu").Device(DEVICE_GPU), NothingOp);
TG_REGISTER_KERNEL(KernelDefBuilder("TestCpuOnly").Device(DEVICE_CPU), NothingOp);

NodeDef N(const std::string& name, const std::string& op, std::vector<std::string> inputs = {},
          const std::string& device = "") {
  NodeDef n;
  n.set_name(name);
  n.set_op(op);
  n.set_device(device);
  for (auto& in : inputs) n.add_input(in);
  if (op == "VariableV2" || op == "VarHandleOp") {
    SetAttr(&n, "dtype", DT_FLOAT);
    SetAttr(&n, "shape", TensorShape({2, 2}));
  } else if (op == "Const") {
    SetAttr(&n, "dtype", DT_FLOAT);
    SetAttr(&n, "value", Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}));
  } else if (op == "Placeholder" || op == "ReadVariableOp" || op == "AssignVariableOp") {
    SetAttr(&n, "dtype", DT_FLOAT);
  } else if (op == "_Arg" || op == "_Retval") {
    SetAttr(&n, "T", DT_FLOAT);
    SetAttr(&n, "index", 0);
  } else if (op != "NoOp" && op.rfind("Test", 0) != 0 && op != "Unregistered") {
    SetAttr(&n, "T", DT_FLOAT);
  }
  return n;
}

NodeDef WithClass(NodeDef n, std::vector<std::string> classes) {
  SetAttr(&n, "_class", classes);
  return n;
}

const std::vector<std::string> kPsWorkers = {
    "/job:ps/replica:0/task:0/device:CPU:0",
    "/job:worker/replica:0/task:0/device:CPU:0",
    "/job:worker/replica:0/task:1/device:CPU:0",
};
const std::string kPs = "/job:ps/replica:0/task:0/device:CPU:0";
const std::string kWorker0 = "/job:worker/replica:0/task:0/device:CPU:0";
const std::string kWorker1 = "/job:worker/replica:0/task:1/device:CPU:0";

std::vector<std::string> LocalCpus(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    out.push_back("/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(i));
  }
  return out;
}

PlacerOptions Soft() {
  PlacerOptions options;
  options.allow_soft_placement = true;
  return options;
}

PlacerOptions Default(std::string device) {
  PlacerOptions options;
  options.default_device = std::move(device);
  return options;
}

class PlacerTest : public ::testing::Test {
 protected:
  absl::Status Place(const std::vector<NodeDef>& nodes, const std::vector<std::string>& devices,
                     PlacerOptions options = {}) {
    GraphDef def;
    for (const NodeDef& n : nodes) *def.add_node() = n;
    TG_ASSIGN_OR_RETURN(graph_, ImportGraphDef(def));
    std::vector<DeviceAttributes> attrs;
    for (const std::string& d : devices) attrs.push_back(DeviceAttributes{d, ""});
    placer_ = std::make_unique<Placer>(graph_.get(), attrs, options);
    return placer_->Run();
  }
  std::string Device(const std::string& node) { return placer_->placements().at(node).device; }
  std::string Reason(const std::string& node) { return placer_->placements().at(node).reason; }

  std::unique_ptr<Graph> graph_;
  std::unique_ptr<Placer> placer_;
};

// The seed example: x, y on the ps, one matmul on each worker.
TEST_F(PlacerTest, VariablesOnPsOpsOnWorkers) {
  ASSERT_OK(
      Place({N("x", "VariableV2", {}, "/job:ps/task:0"), N("y", "VariableV2", {}, "/job:ps/task:0"),
             N("x_init", "Const"), N("x_assign", "Assign", {"x", "x_init"}),
             N("m0", "MatMul", {"x", "y"}, "/job:worker/task:0"),
             N("m1", "MatMul", {"x", "y"}, "/job:worker/task:1")},
            kPsWorkers));
  EXPECT_EQ(Device("x"), kPs);
  EXPECT_EQ(Device("y"), kPs);
  EXPECT_EQ(Device("x_assign"), kPs);
  EXPECT_EQ(Device("x_init"), kPs);
  EXPECT_EQ(Device("m0"), kWorker0);
  EXPECT_EQ(Device("m1"), kWorker1);
  EXPECT_EQ(Reason("x"), "explicit request '/job:ps/task:0'");
  EXPECT_EQ(Reason("m1"), "explicit request '/job:worker/task:1'");
  EXPECT_EQ(Reason("x_assign"), "colocated with 'x' (reference edge)");
  EXPECT_EQ(Reason("x_init"), "follows its only consumer 'x_assign'");
  // The graph's nodes carry the assignment too.
  EXPECT_EQ(graph_->FindNode("m0")->assigned_device_name(), kWorker0);
}

TEST_F(PlacerTest, AssignFollowsRefVariableEvenWhenRequestedElsewhere) {
  ASSERT_OK(Place({N("v", "VariableV2", {}, "/job:ps/task:0"), N("c", "Const"),
                   N("assign", "Assign", {"v", "c"}, "/job:worker/task:1"),
                   N("add", "AssignAdd", {"v", "c"}, "/job:worker/task:0"),
                   N("read", "Identity", {"v"}, "/job:worker/task:1")},
                  kPsWorkers));
  for (const char* node : {"assign", "add"}) EXPECT_EQ(Device(node), kPs) << node;
  EXPECT_EQ(Reason("assign"),
            "colocated with 'v' (reference edge), ignoring its own request '/job:worker/task:1'");
  EXPECT_EQ(Reason("v"), "explicit request '/job:ps/task:0'");
  // A value read (Identity's input is not a reference) keeps its own request,
  // as in TensorFlow.
  EXPECT_EQ(Device("read"), kWorker1);
  EXPECT_EQ(Reason("read"), "explicit request '/job:worker/task:1'");
}

TEST_F(PlacerTest, ARequestForADeviceThatDoesNotExistIsAnErrorWithAHint) {
  // A close job name.
  absl::Status s = Place(
      {N("v", "VariableV2", {}, "/job:ps/task:0"), N("read", "Identity", {"v"}, "/job:pss/task:0")},
      kPsWorkers);
  EXPECT_STATUS(s, kInvalidArgument,
                "cannot place node 'read' (Identity): no device satisfies its constraints\n"
                "  requested: '/job:pss/task:0' (did you mean '/job:ps'?)");
  EXPECT_STATUS(s, kInvalidArgument, "devices: /job:ps/replica:0/task:0 (CPU:0)");
  // A task past the job's, even with soft placement.
  s = Place({N("c", "Const", {}, "/job:worker/task:7")}, kPsWorkers, Soft());
  EXPECT_STATUS(s, kInvalidArgument,
                "requested: '/job:worker/task:7' (job 'worker' has tasks 0..1)");
  // A node that gives way to its reference input still may not name nothing.
  s = Place({N("v", "VariableV2", {}, "/job:ps/task:0"), N("c", "Const"),
             N("assign", "Assign", {"v", "c"}, "/job:nosuchjob/task:0")},
            kPsWorkers);
  EXPECT_STATUS(s, kInvalidArgument,
                "node 'assign' (Assign) requests '/job:nosuchjob/task:0', which names no device of "
                "this session (no job 'nosuchjob'; the jobs are ps, worker)\n  devices: ");
  // Under soft placement a missing device type is a fallback, and says so.
  ASSERT_OK(Place({N("v", "VariableV2", {}, "/job:ps/task:0"), N("c", "Const"),
                   N("assign", "Assign", {"v", "c"}, "/job:worker/task:1/device:GPU:0")},
                  kPsWorkers, Soft()));
  EXPECT_EQ(Reason("assign"),
            "colocated with 'v' (reference edge), ignoring its own request "
            "'/job:worker/task:1/device:GPU:0'");
}

TEST_F(PlacerTest, VariableWithoutRequestFollowsItsAssign) {
  ASSERT_OK(Place({N("v", "VariableV2"), N("c", "Const"),
                   N("assign", "Assign", {"v", "c"}, "/job:worker/task:1")},
                  kPsWorkers));
  EXPECT_EQ(Device("v"), kWorker1);
  EXPECT_EQ(Device("assign"), kWorker1);
  EXPECT_EQ(Reason("v"), "colocated with 'assign' (reference edge)");
  EXPECT_EQ(Reason("assign"), "explicit request '/job:worker/task:1'");
}

TEST_F(PlacerTest, FirstOfTwoConflictingWritersWins) {
  ASSERT_OK(Place(
      {N("v", "VariableV2"), N("c", "Const"), N("a1", "Assign", {"v", "c"}, "/job:worker/task:0"),
       N("a2", "Assign", {"v", "c"}, "/job:worker/task:1")},
      kPsWorkers));
  for (const char* node : {"v", "a1", "a2"}) EXPECT_EQ(Device(node), kWorker0) << node;
  EXPECT_EQ(Reason("v"), "colocated with 'a1' (reference edge)");
  EXPECT_EQ(Reason("a2"),
            "colocated with 'v' (reference edge), ignoring its own request '/job:worker/task:1'");
}

TEST_F(PlacerTest, ValueReadersOfARefVariableAreNotPulledToIt) {
  ASSERT_OK(Place({N("v", "VariableV2", {}, "/job:ps/task:0"), N("p", "Placeholder"),
                   N("m", "MatMul", {"p", "v"}, "/job:worker/task:1")},
                  kPsWorkers));
  EXPECT_EQ(Device("m"), kWorker1);
}

TEST_F(PlacerTest, ResourceEdgesColocate) {
  ASSERT_OK(Place({N("h", "VarHandleOp", {}, "/job:ps/task:0"), N("c", "Const"),
                   N("init", "AssignVariableOp", {"h", "c"}),
                   N("r", "ReadVariableOp", {"h"}, "/job:worker/task:0")},
                  kPsWorkers));
  EXPECT_EQ(Device("init"), kPs);
  EXPECT_EQ(Device("r"), kPs);
  EXPECT_EQ(Reason("init"), "colocated with 'h' (resource edge)");
  EXPECT_EQ(Reason("r"),
            "colocated with 'h' (resource edge), ignoring its own request '/job:worker/task:0'");
}

TEST_F(PlacerTest, SoftPlacementOfGpuRequestOnCpuOnlyDevices) {
  ASSERT_OK(Place({N("p", "Placeholder"), N("n", "Identity", {"p"}, "/device:GPU:0")}, LocalCpus(1),
                  Soft()));
  EXPECT_EQ(Device("n"), LocalCpus(1)[0]);
  EXPECT_EQ(Reason("n"),
            "soft placement: requested '/device:GPU:0' but no such device exists; the device "
            "type and id were dropped");
}

TEST_F(PlacerTest, SoftPlacementKeepsTheTask) {
  ASSERT_OK(Place({N("p", "Placeholder"), N("n", "Identity", {"p"}, "/job:worker/task:1/gpu:0")},
                  kPsWorkers, Soft()));
  EXPECT_EQ(Device("n"), kWorker1);
}

TEST_F(PlacerTest, SoftPlacementWhenTheRequestedDeviceHasNoKernel) {
  const std::vector<std::string> devices = {"/job:localhost/replica:0/task:0/device:CPU:0",
                                            "/job:localhost/replica:0/task:0/device:GPU:0"};
  ASSERT_OK(Place({N("n", "TestCpuOnly", {}, "/gpu:0")}, devices, Soft()));
  EXPECT_EQ(Device("n"), devices[0]);
  EXPECT_EQ(Reason("n"),
            "soft placement: requested '/device:GPU:0' but no matching device has a kernel for "
            "every node of its group (kernels for: CPU); the device type and id were dropped");
  EXPECT_STATUS(Place({N("n", "TestCpuOnly", {}, "/gpu:0")}, devices), kInvalidArgument,
                "kernels: 'n' (TestCpuOnly): CPU");
}

TEST_F(PlacerTest, AStatefulNodeStaysWhereAnEarlierStepPutItWithItsGroup) {
  PlacerOptions options = Soft();
  options.pinned["v"] = kPs;
  // The request says worker 1; the variable's state is on the ps.
  ASSERT_OK(Place({N("v", "VariableV2", {}, "/job:worker/task:1"), N("read", "Identity", {"v"})},
                  kPsWorkers, options));
  EXPECT_EQ(Device("v"), kPs);
  EXPECT_EQ(Device("read"), kPs);
  EXPECT_NE(Reason("v").find("where an earlier step placed 'v' (stateful)"), std::string::npos)
      << Reason("v");
  options.pinned["v"] = "/job:gone/replica:0/task:0/device:CPU:0";
  EXPECT_STATUS(Place({N("v", "VariableV2")}, kPsWorkers, options), kInternal,
                "no longer a device of this session");
}

TEST_F(PlacerTest, ImpossiblePlacementNamesEveryConstraint) {
  absl::Status s = Place({N("v", "VariableV2", {}, "/device:GPU:0"), N("c", "Const"),
                          N("assign", "Assign", {"v", "c"}, "/job:worker/task:0/device:CPU:0")},
                         kPsWorkers);
  EXPECT_STATUS(s, kInvalidArgument,
                "cannot place node 'v' (VariableV2): no device satisfies its constraints");
  EXPECT_STATUS(s, kInvalidArgument,
                "requested: '/device:GPU:0' (merged over its colocation group: '/device:GPU:0')");
  EXPECT_STATUS(s, kInvalidArgument,
                "colocation group:\n    'v' (VariableV2): requests '/device:GPU:0'");
  EXPECT_STATUS(
      s, kInvalidArgument,
      "'assign' (Assign): requests '/job:worker/task:0/device:CPU:0' (ignored: it follows its "
      "reference/resource input); colocated with 'v' (reference edge)");
  EXPECT_STATUS(s, kInvalidArgument,
                "devices: /job:ps/replica:0/task:0 (CPU:0), /job:worker/replica:0/task:0 (CPU:0), "
                "/job:worker/replica:0/task:1 (CPU:0)");
  EXPECT_STATUS(s, kInvalidArgument,
                "kernels: 'v' (VariableV2): CPU, GPU; 'assign' (Assign): CPU, GPU; every member: "
                "CPU");
  EXPECT_STATUS(s, kInvalidArgument,
                "hint: allow_soft_placement would drop the device type and id");
}

TEST_F(PlacerTest, ImpossiblePlacementOfAMissingJob) {
  absl::Status s = Place({N("p", "Placeholder", {}, "/job:chief/task:0")}, kPsWorkers, Soft());
  EXPECT_STATUS(s, kInvalidArgument, "cannot place node 'p' (Placeholder)");
  EXPECT_STATUS(s, kInvalidArgument,
                "requested: '/job:chief/task:0' (no job 'chief'; the jobs are ps, worker)\n"
                "  colocation group: this node alone");
  EXPECT_STATUS(s, kInvalidArgument,
                "soft placement: no device matching '/job:chief/task:0' has a kernel for every "
                "member either");
}

TEST_F(PlacerTest, ImpossiblePlacementOfAnOpWithoutKernels) {
  absl::Status s = Place({N("k", "TestNoKernel")}, LocalCpus(2), Soft());
  EXPECT_STATUS(s, kInvalidArgument, "cannot place node 'k' (TestNoKernel)");
  EXPECT_STATUS(s, kInvalidArgument, "requested: nothing");
  EXPECT_STATUS(s, kInvalidArgument, "devices: /job:localhost/replica:0/task:0 (CPU:0, CPU:1)");
  EXPECT_STATUS(s, kInvalidArgument, "kernels: 'k' (TestNoKernel): none");
  EXPECT_STATUS(s, kInvalidArgument, "no device of any type has a kernel for every member either");
}

TEST_F(PlacerTest, ClassAttrColocates) {
  ASSERT_OK(Place({N("x", "Placeholder", {}, "/job:worker/task:1"),
                   WithClass(N("y", "TestCpuAndGpu"), {"loc:@x"}),
                   WithClass(N("a", "Placeholder"), {"loc:@gone"}),
                   WithClass(N("b", "Placeholder", {}, "/job:ps"), {"loc:@gone", "other"})},
                  kPsWorkers));
  EXPECT_EQ(Device("y"), kWorker1);
  EXPECT_EQ(Reason("y"), "colocated with 'x' (_class loc:@x)");
  // Nodes naming the same absent node share a device.
  EXPECT_EQ(Device("a"), kPs);
  EXPECT_EQ(Reason("a"), "colocated with 'b' (_class loc:@gone)");
}

TEST_F(PlacerTest, ClassAttrConflictNamesBothRequests) {
  absl::Status s = Place({N("x", "Placeholder", {}, "/job:worker/task:1"),
                          WithClass(N("z", "Placeholder", {}, "/job:worker/task:0"), {"loc:@x"})},
                         kPsWorkers, Soft());
  EXPECT_STATUS(s, kInvalidArgument,
                "cannot colocate node 'z' (Placeholder) with its colocation group: cannot merge "
                "device names '/job:worker/task:1' and '/job:worker/task:0': tasks differ ('1' vs "
                "'0')");
  EXPECT_STATUS(s, kInvalidArgument, "'x' (Placeholder): requests '/job:worker/task:1'");
  EXPECT_STATUS(s, kInvalidArgument,
                "'z' (Placeholder): requests '/job:worker/task:0'; colocated with 'x' (_class "
                "loc:@x)");
}

TEST_F(PlacerTest, ClassAttrTypeConflictIsSoftened) {
  const std::vector<NodeDef> nodes = {N("x", "Placeholder", {}, "/device:CPU:1"),
                                      WithClass(N("y", "Placeholder", {}, "/cpu:0"), {"loc:@x"})};
  EXPECT_STATUS(Place(nodes, LocalCpus(2)), kInvalidArgument, "device ids differ ('1' vs '0')");
  ASSERT_OK(Place(nodes, LocalCpus(2), Soft()));
  EXPECT_EQ(Device("x"), LocalCpus(2)[0]);
  EXPECT_EQ(Device("y"), LocalCpus(2)[0]);
  EXPECT_EQ(Reason("y"), "explicit request '/cpu:0'");
  EXPECT_EQ(Reason("x"),
            "soft placement: requested '/device:CPU:1' but the group's requests conflict "
            "('/device:CPU:1' vs '/cpu:0' of 'y'), so the device type and id were left open");
}

TEST_F(PlacerTest, UnregisteredOpsDoNotConstrainTheirGroup) {
  ASSERT_OK(Place({N("x", "Placeholder", {}, "/job:worker/task:1"),
                   WithClass(N("u", "Unregistered"), {"loc:@x"})},
                  kPsWorkers));
  EXPECT_EQ(Device("u"), kWorker1);
  // Its reason says that it cannot run anywhere.
  EXPECT_EQ(
      Reason("u"),
      "colocated with 'x' (_class loc:@x); op 'Unregistered' (node 'u') is not registered, so "
      "the node cannot run");
}

TEST_F(PlacerTest, MetadataOpsFollowTheirInput) {
  ASSERT_OK(Place({N("x", "Placeholder", {}, "/job:worker/task:1"), N("s", "Shape", {"x"}),
                   N("s2", "Shape", {"x"}, "/job:ps")},
                  kPsWorkers, Default("/job:worker/replica:0/task:0")));
  EXPECT_EQ(Device("s"), kWorker1);
  EXPECT_EQ(Reason("s"), "follows its input 'x' (metadata op)");
  EXPECT_EQ(Device("s2"), kPs);
}

TEST_F(PlacerTest, GeneratorsFollowTheirOnlyConsumer) {
  ASSERT_OK(Place(
      {N("c", "Const"), N("p", "Placeholder", {}, "/job:worker/task:1"),
       N("m", "MatMul", {"c", "p"}, "/job:worker/task:1"), N("shared", "Const"),
       N("a0", "Identity", {"shared"}, "/job:ps"),
       N("a1", "Identity", {"shared"}, "/job:worker/task:1"),
       WithClass(N("pinned", "Const"), {"loc:@p"}), N("b", "Identity", {"pinned"}, "/job:ps")},
      kPsWorkers, Default("/job:worker/replica:0/task:0")));
  EXPECT_EQ(Device("c"), kWorker1);
  EXPECT_EQ(Reason("c"), "follows its only consumer 'm'");
  // Two consumers: the default device.
  EXPECT_EQ(Device("shared"), kWorker0);
  EXPECT_EQ(Reason("shared"), "default device");
  // Colocated generators stay with their group.
  EXPECT_EQ(Device("pinned"), kWorker1);
}

TEST_F(PlacerTest, CallFrameNodesFollowTheirConsumerAndInput) {
  ASSERT_OK(
      Place({N("arg", "_Arg"), N("p", "Placeholder", {}, "/job:worker/task:1"),
             N("m", "MatMul", {"arg", "p"}, "/job:worker/task:1"), N("ret", "_Retval", {"m"})},
            kPsWorkers, Default("/job:worker/replica:0/task:0")));
  EXPECT_EQ(Device("arg"), kWorker1);
  EXPECT_EQ(Reason("arg"), "follows its first consumer 'm' (_Arg)");
  EXPECT_EQ(Device("ret"), kWorker1);
  EXPECT_EQ(Reason("ret"), "follows its input 'm' (_Retval)");
}

TEST_F(PlacerTest, DefaultPrefersTheDefaultTaskThenGpuThenLowestName) {
  std::vector<std::string> devices = kPsWorkers;
  devices.push_back("/job:worker/replica:0/task:1/device:GPU:0");
  ASSERT_OK(Place({N("g", "TestCpuAndGpu"), N("p", "TestCpuOnly")}, devices));
  EXPECT_EQ(Device("g"), "/job:worker/replica:0/task:1/device:GPU:0");
  EXPECT_EQ(Device("p"), kPs);  // no GPU kernel; lowest name
  EXPECT_EQ(Reason("p"), "default device");
  ASSERT_OK(Place({N("g", "TestCpuAndGpu"), N("p", "Placeholder")}, devices,
                  Default("/job:worker/replica:0/task:0")));
  EXPECT_EQ(Device("g"), kWorker0);
  EXPECT_EQ(Device("p"), kWorker0);
  // A partial request leaves the rest to the default.
  ASSERT_OK(Place({N("p", "Placeholder", {}, "/device:CPU:0")}, devices,
                  Default("/job:worker/replica:0/task:1")));
  EXPECT_EQ(Device("p"), kWorker1);
}

TEST_F(PlacerTest, SeveralCpusInOneTask) {
  const std::vector<std::string> cpus = LocalCpus(12);
  ASSERT_OK(Place({N("p", "Placeholder"), N("a", "Identity", {"p"}, "/device:CPU:2"),
                   N("b", "Identity", {"a"}, "/cpu:3"),
                   N("c", "Identity", {"b"}, "/job:localhost/replica:0/task:0/device:CPU:11"),
                   N("d", "Identity", {"c"})},
                  cpus, Default("/job:localhost/replica:0/task:0")));
  EXPECT_EQ(Device("a"), cpus[2]);
  EXPECT_EQ(Device("b"), cpus[3]);
  EXPECT_EQ(Device("c"), cpus[11]);
  EXPECT_EQ(Device("d"), cpus[0]);
  EXPECT_EQ(Device("p"), cpus[2]);  // a generator with one consumer
  EXPECT_EQ(Reason("b"), "explicit request '/cpu:3'");
  EXPECT_STATUS(Place({N("p", "Placeholder", {}, "/device:CPU:12")}, cpus), kInvalidArgument,
                "requested: '/device:CPU:12'");
}

TEST_F(PlacerTest, PlacementIsDeterministic) {
  std::vector<NodeDef> nodes = {
      N("v", "VariableV2"),
      N("c", "Const"),
      N("assign", "Assign", {"v", "c"}),
      N("p", "Placeholder"),
      N("m", "MatMul", {"p", "v"}),
      N("s", "Shape", {"m"}),
      N("q", "Placeholder", {}, "/job:worker"),
      N("m2", "MatMul", {"q", "m"}),
  };
  std::vector<std::string> devices = kPsWorkers;
  ASSERT_OK(Place(nodes, devices));
  const auto first = placer_->placements();
  std::map<std::string, std::string> got;
  for (const auto& [node, placement] : first) got[node] = placement.device;
  EXPECT_EQ(got.at("q"), kWorker0);
  EXPECT_EQ(got.at("m2"), kPs);
  ASSERT_OK(placer_->Run());  // again: the same
  for (const auto& [node, placement] : placer_->placements()) {
    EXPECT_EQ(placement.device, first.at(node).device) << node;
    EXPECT_EQ(placement.reason, first.at(node).reason) << node;
  }
  // Neither the order of the device list nor that of the nodes matters.
  std::reverse(nodes.begin(), nodes.end());
  std::reverse(devices.begin(), devices.end());
  ASSERT_OK(Place(nodes, devices));
  for (const auto& [node, placement] : placer_->placements()) {
    EXPECT_EQ(placement.device, first.at(node).device) << node;
    EXPECT_EQ(placement.reason, first.at(node).reason) << node;
  }
}

TEST_F(PlacerTest, LogsEachPlacementOnce) {
  PlacerOptions options;
  options.log_device_placement = true;
  testing::internal::CaptureStderr();
  ASSERT_OK(
      Place({N("v", "VariableV2", {}, "/job:ps"), N("r", "Identity", {"v"})}, kPsWorkers, options));
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log,
            "v: (VariableV2): /job:ps/replica:0/task:0/device:CPU:0\n"
            "r: (Identity): /job:ps/replica:0/task:0/device:CPU:0\n");
}

TEST_F(PlacerTest, ExplainShowsTheChainOfConstraints) {
  ASSERT_OK(Place(
      {N("v", "VariableV2", {}, "/job:ps/task:0"), N("c", "Const"),
       N("assign", "Assign", {"v", "c"}), WithClass(N("snap", "Identity", {"c"}), {"loc:@assign"})},
      kPsWorkers, Default("/job:worker/replica:0/task:0")));
  EXPECT_EQ(Device("snap"), kPs);
  const std::string e = placer_->Explain("snap");
  EXPECT_NE(e.find("'snap' (Identity) -> /job:ps/replica:0/task:0/device:CPU:0"), std::string::npos)
      << e;
  EXPECT_NE(
      e.find("chain to the request: 'snap' -(_class loc:@assign)- 'assign' -(reference edge)- "
             "'v' which requests '/job:ps/task:0'"),
      std::string::npos)
      << e;
  EXPECT_NE(e.find("colocation group (3 nodes)"), std::string::npos) << e;
  EXPECT_NE(e.find("group request: '/job:ps/task:0'"), std::string::npos) << e;
  EXPECT_NE(e.find("candidates: /job:ps/replica:0/task:0/device:CPU:0"), std::string::npos) << e;
  EXPECT_NE(e.find("default device: '/job:worker/replica:0/task:0'"), std::string::npos) << e;
  EXPECT_EQ(placer_->Explain("nope"), "no node named 'nope'\n");
}

TEST_F(PlacerTest, ExplainWorksAfterAFailedRun) {
  ASSERT_FALSE(Place({N("p", "Placeholder", {}, "/gpu:0")}, LocalCpus(1)).ok());
  const std::string e = placer_->Explain("p");
  EXPECT_NE(e.find("'p' (Placeholder) -> (not placed)"), std::string::npos) << e;
  EXPECT_NE(e.find("requested: '/gpu:0'"), std::string::npos) << e;
  EXPECT_NE(e.find("candidates: none"), std::string::npos) << e;
}

TEST_F(PlacerTest, RejectsMalformedNames) {
  EXPECT_STATUS(Place({N("p", "Placeholder", {}, "/job:ps/task:x")}, kPsWorkers), kInvalidArgument,
                "node 'p' (Placeholder): device name '/job:ps/task:x' is malformed: task must be a "
                "non-negative integer, got 'x'");
  EXPECT_STATUS(Place({N("p", "Placeholder")}, {"/job:ps/task:0"}), kInvalidArgument,
                "device '/job:ps/task:0' is not a full device name");
  EXPECT_STATUS(Place({N("p", "Placeholder")}, {kPs, kPs}), kInvalidArgument,
                "device '/job:ps/replica:0/task:0/device:CPU:0' is listed twice");
  EXPECT_STATUS(Place({N("p", "Placeholder")}, {}), kInvalidArgument, "no devices");
  EXPECT_STATUS(Place({N("p", "Placeholder")}, kPsWorkers, Default("ps")), kInvalidArgument,
                "default_device: device name 'ps' is malformed");
  GraphDef def;
  *def.add_node() = N("p", "Placeholder");
  auto graph = ImportGraphDef(def);
  ASSERT_TRUE(graph.ok());
  Placer placer(graph->get(), {{kPs, "GPU"}}, {});
  EXPECT_STATUS(placer.Run(), kInvalidArgument, "has type 'GPU' but its name says 'CPU'");
}

}  // namespace
}  // namespace tensorgrid
