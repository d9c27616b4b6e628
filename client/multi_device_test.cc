// A local session with several CPU devices: placement, partitioning, and
// Send/Recv through the step rendezvous, seen from the Session API.
#include <map>
#include <random>
#include <string>

#include "core/framework/attr_value_util.h"
#include "core/public/session.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:";

std::unique_ptr<Session> NewLocalSession(int cpus, bool soft = false, bool log = false) {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = cpus;
  options.config.set_allow_soft_placement(soft);
  options.config.set_log_device_placement(log);
  auto s = NewSession(options);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

NodeDef* Add(GraphDef* g, const std::string& name, const std::string& op,
             std::vector<std::string> inputs, const std::string& device = "") {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  n->set_device(device);
  for (auto& i : inputs) n->add_input(i);
  if (op != "Placeholder" && op != "Const" && op != "NoOp") SetAttr(n, "T", DT_FLOAT);
  return n;
}

NodeDef* Placeholder(GraphDef* g, const std::string& name, const std::string& device = "") {
  NodeDef* n = Add(g, name, "Placeholder", {}, device);
  SetAttr(n, "dtype", DT_FLOAT);
  return n;
}

TEST(MultiDeviceTest, CrossDeviceStepComputesAndReportsPartitions) {
  GraphDef g;
  Placeholder(&g, "x", "/device:CPU:2");
  Add(&g, "sq", "Square", {"x"}, "/device:CPU:2");
  Add(&g, "neg", "Neg", {"sq"}, "/cpu:3");
  Add(&g, "sum", "AddV2", {"neg", "x"});  // default: CPU:0
  auto session = NewLocalSession(4);
  ASSERT_OK(session->Create(g));
  RunOptions options;
  options.set_output_partition_graphs(true);
  options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  std::vector<Tensor> out;
  ASSERT_OK(session->Run(options, {{"x", Tensor::FromVector<float>({1, 2, 3}, {3})}}, {"sum", "sq"},
                         {}, &out, &metadata));
  ExpectTensorEqual<float>(out[0], {0, -2, -6}, TensorShape({3}));
  ExpectTensorEqual<float>(out[1], {1, 4, 9}, TensorShape({3}));
  ASSERT_EQ(metadata.partition_graphs_size(), 3);
  int sends = 0, recvs = 0;
  for (const GraphDef& p : metadata.partition_graphs()) {
    for (const NodeDef& n : p.node()) {
      sends += n.op() == "_Send";
      recvs += n.op() == "_Recv";
      if (n.name() == "neg") {
        EXPECT_EQ(n.device(), std::string(kCpu) + "3");
      }
      if (n.name() == "sum") {
        EXPECT_EQ(n.device(), std::string(kCpu) + "0");
      }
    }
  }
  EXPECT_EQ(sends, recvs);
  EXPECT_GE(sends, 3);  // sq -> CPU:3, neg -> CPU:0, x -> CPU:0
  EXPECT_EQ(metadata.step_stats().dev_stats_size(), 3);
  bool saw_recv = false;
  for (const auto& dev : metadata.step_stats().dev_stats()) {
    for (const auto& ns : dev.node_stats()) {
      if (ns.timeline_label().find("_Recv 12 bytes from /job:localhost") != std::string::npos)
        saw_recv = true;
    }
  }
  EXPECT_TRUE(saw_recv);
}

TEST(MultiDeviceTest, FailingPartitionReportsRootCauseNotItsEchoes) {
  GraphDef g;
  Placeholder(&g, "a", "/device:CPU:1");
  Placeholder(&g, "b", "/device:CPU:1");
  Add(&g, "bad", "AddV2", {"a", "b"}, "/device:CPU:1");  // shapes [2] + [3] fail here
  Add(&g, "after", "Neg", {"bad"}, "/device:CPU:0");     // waits on a _Recv from CPU:1
  auto session = NewLocalSession(2);
  ASSERT_OK(session->Create(g));
  std::vector<Tensor> out;
  for (int i = 0; i < 20; ++i) {
    absl::Status s = session->Run({{"a", Tensor::FromVector<float>({1, 2}, {2})},
                                   {"b", Tensor::FromVector<float>({1, 2, 3}, {3})}},
                                  {"after"}, {}, &out);
    EXPECT_STATUS(s, kInvalidArgument, "node 'bad' (AddV2)");
  }
}

TEST(MultiDeviceTest, SoftPlacementOfGpuRequestOnCpuOnlyProcess) {
  GraphDef g;
  Placeholder(&g, "x");
  Add(&g, "y", "Neg", {"x"}, "/device:GPU:0");
  auto strict = NewLocalSession(1);
  ASSERT_OK(strict->Create(g));
  std::vector<Tensor> out;
  EXPECT_STATUS(strict->Run({{"x", Tensor::Scalar<float>(1)}}, {"y"}, {}, &out), kInvalidArgument,
                "'y'");
  auto soft = NewLocalSession(1, /*soft=*/true);
  ASSERT_OK(soft->Create(g));
  ASSERT_OK(soft->Run({{"x", Tensor::Scalar<float>(1)}}, {"y"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {-1}, TensorShape({}));
}

TEST(MultiDeviceTest, LogDevicePlacementPrintsEachNodeOnce) {
  GraphDef g;
  Placeholder(&g, "x");
  Add(&g, "y", "Neg", {"x"}, "/device:CPU:1");
  auto session = NewLocalSession(2, false, /*log=*/true);
  ASSERT_OK(session->Create(g));
  std::vector<Tensor> out;
  testing::internal::CaptureStderr();
  ASSERT_OK(session->Run({{"x", Tensor::Scalar<float>(1)}}, {"y"}, {}, &out));
  ASSERT_OK(session->Run({{"x", Tensor::Scalar<float>(2)}}, {"y"}, {}, &out));  // cached: no log
  std::string log = testing::internal::GetCapturedStderr();
  const std::string line = std::string("y: (Neg): ") + kCpu + "1";
  size_t first = log.find(line);
  EXPECT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find(line, first + 1), std::string::npos) << log;
}

TEST(MultiDeviceTest, VariableOnOneDeviceUpdatedFromAnother) {
  GraphDef g;
  NodeDef* v = Add(&g, "v", "VariableV2", {}, "/device:CPU:1");
  v->mutable_attr()->erase("T");
  SetAttr(v, "dtype", DT_FLOAT);
  SetAttr(v, "shape", PartialTensorShape({}));
  NodeDef* init = Add(&g, "init_value", "Const", {}, "/device:CPU:0");
  SetAttr(init, "dtype", DT_FLOAT);
  SetAttr(init, "value", Tensor::Scalar<float>(5));
  Add(&g, "assign", "Assign", {"v", "init_value"}, "/device:CPU:0");  // colocated with v
  Add(&g, "read", "Identity", {"v"});  // no request: the default device
  Add(&g, "doubled", "AddV2", {"read", "read"}, "/device:CPU:0");
  auto session = NewLocalSession(2);
  ASSERT_OK(session->Create(g));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({}, {}, {"assign"}, &out));
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  ASSERT_OK(session->Run(options, {}, {"doubled"}, {}, &out, &metadata));
  ExpectTensorEqual<float>(out[0], {10}, TensorShape({}));
  // The value crossed devices: v lives on CPU:1, its read (Identity takes a
  // value, not the reference) and the sum on CPU:0, as in TensorFlow.
  std::map<std::string, std::string> device_of;
  for (const GraphDef& p : metadata.partition_graphs()) {
    for (const NodeDef& n : p.node()) device_of[n.name()] = n.device();
  }
  EXPECT_EQ(device_of["v"], std::string(kCpu) + "1");
  EXPECT_EQ(device_of["read"], std::string(kCpu) + "0");
}

// Random DAGs of element-wise ops give bit-identical fetches whether placed on
// one device or scattered over four.
TEST(MultiDeviceTest, RandomGraphsMatchAcrossDeviceCounts) {
  std::mt19937 rng(1234);
  const char* kBinary[] = {"AddV2", "Sub", "Mul", "Maximum", "Minimum"};
  const char* kUnary[] = {"Neg", "Square", "Tanh", "Sigmoid"};
  for (int trial = 0; trial < 25; ++trial) {
    GraphDef one, four;
    std::vector<std::string> names;
    for (int i = 0; i < 3; ++i) {
      std::string name = "in" + std::to_string(i);
      NodeDef* c = Add(&one, name, "Const", {});
      SetAttr(c, "dtype", DT_FLOAT);
      std::uniform_real_distribution<float> value(-2, 2);
      SetAttr(c, "value",
              Tensor::FromVector<float>({value(rng), value(rng), value(rng), value(rng)}, {4}));
      names.push_back(name);
    }
    const int n = 8 + static_cast<int>(rng() % 20);
    for (int i = 0; i < n; ++i) {
      std::string name = "n" + std::to_string(i);
      std::string a = names[rng() % names.size()];
      if (rng() % 3 == 0) {
        Add(&one, name, kUnary[rng() % 4], {a});
      } else {
        Add(&one, name, kBinary[rng() % 5], {a, names[rng() % names.size()]});
      }
      names.push_back(name);
    }
    four = one;
    for (NodeDef& node : *four.mutable_node())
      node.set_device("/device:CPU:" + std::to_string(rng() % 4));
    std::vector<std::string> fetches(names.end() - 3, names.end());
    std::vector<Tensor> a, b;
    auto s1 = NewLocalSession(1);
    auto s4 = NewLocalSession(4);
    ASSERT_OK(s1->Create(one));
    ASSERT_OK(s4->Create(four));
    ASSERT_OK(s1->Run({}, fetches, {}, &a));
    ASSERT_OK(s4->Run({}, fetches, {}, &b));
    for (size_t i = 0; i < fetches.size(); ++i) {
      ASSERT_EQ(a[i].TotalBytes(), b[i].TotalBytes());
      EXPECT_EQ(std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].TotalBytes()), 0)
          << "trial " << trial << " fetch " << fetches[i];
    }
  }
}

}  // namespace
}  // namespace tensorgrid
