#include "core/graph/partition.h"

#include "core/framework/attr_value_util.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

const char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
const char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

// a (CPU:0) -> b, c (CPU:1) both reading a:0; d (CPU:0) control-depends on b.
std::unique_ptr<Graph> TwoDeviceGraph() {
  GraphDef g;
  auto add = [&](const std::string& name, const std::string& op, std::vector<std::string> in) {
    NodeDef* n = g.add_node();
    n->set_name(name);
    n->set_op(op);
    for (auto& i : in) n->add_input(i);
    return n;
  };
  NodeDef* a = add("a", "Const", {});
  SetAttr(a, "dtype", DT_FLOAT);
  SetAttr(a, "value", Tensor::Scalar<float>(1));
  SetAttr(add("b", "Neg", {"a"}), "T", DT_FLOAT);
  SetAttr(add("c", "Square", {"a"}), "T", DT_FLOAT);
  add("d", "NoOp", {"^b"});
  auto graph = ImportGraphDef(g);
  EXPECT_TRUE(graph.ok());
  for (const char* n : {"a", "d"}) (*graph)->FindNode(n)->set_assigned_device_name(kCpu0);
  for (const char* n : {"b", "c"}) (*graph)->FindNode(n)->set_assigned_device_name(kCpu1);
  return std::move(graph).value();
}

PartitionOptions ByDevice() {
  PartitionOptions o;
  o.node_to_loc = [](const Node& n) { return n.assigned_device_name(); };
  o.get_incarnation = [](const std::string& d) -> uint64_t { return d == kCpu0 ? 7 : 9; };
  return o;
}

const NodeDef* Find(const GraphDef& g, const std::string& op, int nth = 0) {
  for (const NodeDef& n : g.node()) {
    if (n.op() == op && nth-- == 0) return &n;
  }
  return nullptr;
}

TEST(PartitionTest, CrossDeviceEdgeBecomesOneSendRecvPairPerDestination) {
  auto g = TwoDeviceGraph();
  std::map<std::string, GraphDef> parts;
  ASSERT_OK(Partition(*g, ByDevice(), &parts));
  ASSERT_EQ(parts.size(), 2u);
  const GraphDef& p0 = parts[kCpu0];
  const GraphDef& p1 = parts[kCpu1];
  // a:0 feeds b and c on CPU:1 through a single transfer.
  const NodeDef* send = Find(p0, "_Send");
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(send->input(0), "a");
  EXPECT_EQ(send->attr().at("send_device").s(), kCpu0);
  EXPECT_EQ(send->attr().at("recv_device").s(), kCpu1);
  EXPECT_EQ(send->attr().at("send_device_incarnation").i(), 7);
  EXPECT_EQ(send->device(), kCpu0);
  const NodeDef* recv = Find(p1, "_Recv");
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->attr().at("tensor_name").s(), send->attr().at("tensor_name").s());
  EXPECT_EQ(recv->device(), kCpu1);
  EXPECT_EQ(Find(p1, "_Recv", 1), nullptr);
  for (const NodeDef& n : p1.node()) {
    if (n.name() == "b" || n.name() == "c") {
      EXPECT_EQ(n.input(0), recv->name());
    }
  }
}

TEST(PartitionTest, CrossDeviceControlEdgeGoesThroughADummyTensor) {
  auto g = TwoDeviceGraph();
  std::map<std::string, GraphDef> parts;
  ASSERT_OK(Partition(*g, ByDevice(), &parts));
  const GraphDef& p0 = parts[kCpu0];
  const GraphDef& p1 = parts[kCpu1];
  // b (CPU:1) -> ^d (CPU:0): a Const on CPU:1 waits for b and is sent to CPU:0.
  const NodeDef* dummy = Find(p1, "Const");
  ASSERT_NE(dummy, nullptr);
  EXPECT_EQ(dummy->input(0), "^b");
  const NodeDef* recv = Find(p0, "_Recv");
  ASSERT_NE(recv, nullptr);
  for (const NodeDef& n : p0.node()) {
    if (n.name() == "d") {
      EXPECT_EQ(n.input(0), "^" + recv->name());
    }
  }
}

// x, y, z on CPU:1; u waits for x and y, v for y and x, w for z, all on
// CPU:0.
TEST(PartitionTest, ControlEdgesFromOnePartitionToOneNodeTravelAsOneSignal) {
  GraphDef def;
  for (const char* name : {"x", "y", "z"}) {
    NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op("NoOp");
  }
  auto add = [&](const std::string& name, std::vector<std::string> in) {
    NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op("NoOp");
    for (auto& i : in) n->add_input(i);
  };
  add("u", {"^x", "^y"});
  add("v", {"^y", "^x"});
  add("w", {"^z"});
  auto graph = ImportGraphDef(def);
  ASSERT_OK(graph.status());
  for (Node* n : (*graph)->nodes()) {
    n->set_assigned_device_name(n->name() >= "x" ? kCpu1 : kCpu0);
  }
  std::map<std::string, GraphDef> parts;
  ASSERT_OK(Partition(**graph, ByDevice(), &parts));
  const GraphDef& p0 = parts[kCpu0];
  const GraphDef& p1 = parts[kCpu1];
  // Two transfers: {x, y} for u and v, {z} for w.
  ASSERT_NE(Find(p1, "_Send", 1), nullptr);
  EXPECT_EQ(Find(p1, "_Send", 2), nullptr);
  std::map<std::string, std::vector<std::string>> inputs;
  for (const NodeDef& n : p0.node()) inputs[n.name()] = {n.input().begin(), n.input().end()};
  ASSERT_EQ(inputs["u"].size(), 1u);
  EXPECT_EQ(inputs["v"], inputs["u"]);
  ASSERT_EQ(inputs["w"].size(), 1u);
  EXPECT_NE(inputs["w"], inputs["u"]);
  std::map<std::string, std::vector<std::string>> dummies;
  for (const NodeDef& n : p1.node()) {
    if (n.op() == "Const") dummies[n.name()] = {n.input().begin(), n.input().end()};
  }
  EXPECT_EQ(dummies["_control_deps_of_u"], (std::vector<std::string>{"^x", "^y"}));
  EXPECT_EQ(dummies["_control_z"], (std::vector<std::string>{"^z"}));
  EXPECT_EQ(inputs["u"][0], "^_recv_deps_of_u_control_on_CPU_0");
  EXPECT_EQ(inputs["w"][0], "^_recv_z_control_on_CPU_0");
}

TEST(PartitionTest, PartitionsRoundTripThroughImport) {
  auto g = TwoDeviceGraph();
  std::map<std::string, GraphDef> parts;
  ASSERT_OK(Partition(*g, ByDevice(), &parts));
  int total = 0;
  for (auto& [loc, def] : parts) {
    auto imported = ImportGraphDef(def);
    ASSERT_TRUE(imported.ok()) << loc << ": " << imported.status();
    for (Node* n : (*imported)->nodes()) EXPECT_EQ(n->requested_device(), loc) << n->name();
    total += (*imported)->num_nodes();
  }
  EXPECT_EQ(total, 4 + 2 + 2 + 1);  // originals, two pairs, one dummy
}

TEST(PartitionTest, UnplacedNodeIsInvalidArgument) {
  auto g = TwoDeviceGraph();
  g->FindNode("c")->set_assigned_device_name("");
  std::map<std::string, GraphDef> parts;
  EXPECT_STATUS(Partition(*g, ByDevice(), &parts), kInvalidArgument,
                "node 'c' (Square) has no assigned device");
}

}  // namespace
}  // namespace tensorgrid
