#include "core/graph/graph.h"

#include "core/framework/attr_value_util.h"
#include "core/framework/versions.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

NodeDef N(const std::string& name, const std::string& op, std::vector<std::string> inputs,
          DataType t = DT_FLOAT) {
  NodeDef n;
  n.set_name(name);
  n.set_op(op);
  for (auto& i : inputs) n.add_input(i);
  if (op == "Placeholder") {
    SetAttr(&n, "dtype", t);
  } else if (op != "NoOp") {
    SetAttr(&n, "T", t);
  }
  return n;
}

GraphDef G(std::vector<NodeDef> nodes) {
  GraphDef g;
  for (auto& n : nodes) *g.add_node() = n;
  return g;
}

TEST(GraphTest, ImportsAndExportsRoundTrip) {
  GraphDef def = G({N("a", "Placeholder", {}), N("b", "Identity", {"a"}),
                    N("c", "Mul", {"a", "b:0"}), N("d", "NoOp", {"^c"})});
  auto g = ImportGraphDef(def);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_nodes(), 4);
  Node* c = (*g)->FindNode("c");
  EXPECT_EQ(c->num_inputs(), 2);
  EXPECT_EQ(c->input_edge(1)->src->name(), "b");
  GraphDef out;
  (*g)->ToGraphDef(&out);
  ASSERT_EQ(out.node_size(), 4);
  EXPECT_EQ(out.node(2).input(0), "a");
  EXPECT_EQ(out.node(2).input(1), "b");
  EXPECT_EQ(out.node(3).input(0), "^c");
  // Defaults were filled in: Placeholder's shape.
  EXPECT_TRUE(out.node(0).attr().count("shape"));
}

TEST(GraphTest, RejectsDuplicateNames) {
  EXPECT_STATUS(ImportGraphDef(G({N("a", "Placeholder", {}), N("a", "Placeholder", {})})).status(),
                kInvalidArgument, "duplicate node name 'a'");
}

TEST(GraphTest, RejectsDanglingInputs) {
  EXPECT_STATUS(ImportGraphDef(G({N("b", "Identity", {"nope"})})).status(), kInvalidArgument,
                "node 'b' input 0 ('nope') refers to unknown node 'nope'");
  EXPECT_STATUS(ImportGraphDef(G({N("b", "NoOp", {"^ghost"})})).status(), kInvalidArgument,
                "unknown node 'ghost'");
}

TEST(GraphTest, RejectsOutOfRangePort) {
  EXPECT_STATUS(
      ImportGraphDef(G({N("a", "Placeholder", {}), N("b", "Identity", {"a:1"})})).status(),
      kInvalidArgument, "has 1 output(s)");
}

TEST(GraphTest, RejectsTypeMismatch) {
  EXPECT_STATUS(
      ImportGraphDef(G({N("a", "Placeholder", {}, DT_INT32), N("b", "Identity", {"a"})})).status(),
      kInvalidArgument, "expects float but 'a' is int32");
}

TEST(GraphTest, RejectsCycles) {
  EXPECT_STATUS(ImportGraphDef(G({N("a", "Identity", {"b"}), N("b", "Identity", {"a"})})).status(),
                kInvalidArgument, "cycle");
}

TEST(GraphTest, RejectsWrongInputCountAndAttrs) {
  EXPECT_STATUS(ImportGraphDef(G({N("a", "Placeholder", {}), N("m", "Mul", {"a"})})).status(),
                kInvalidArgument, "has 1 data inputs, but the op takes 2");
  NodeDef bad = N("a", "Placeholder", {});
  SetAttr(&bad, "dtype", 3.0f);
  EXPECT_STATUS(ImportGraphDef(G({bad})).status(), kInvalidArgument, "attr 'dtype' of node 'a'");
  EXPECT_STATUS(ImportGraphDef(G({N("x", "Identity", {"^y", "z"}), N("y", "NoOp", {}),
                                  N("z", "Placeholder", {})}))
                    .status(),
                kInvalidArgument, "follows a control input");
}

TEST(GraphTest, UnregisteredOpsImportAndLearnOutputsFromConsumers) {
  NodeDef weird;
  weird.set_name("w");
  weird.set_op("SomethingTensorFlowHasButWeDoNot");
  auto g = ImportGraphDef(G({weird, N("b", "Identity", {"w:2"})}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindNode("w")->num_outputs(), 3);
  EXPECT_EQ((*g)->FindNode("w")->op_def(), nullptr);
}

TEST(GraphTest, UnregisteredOpsOutputsAreBounded) {
  NodeDef weird;
  weird.set_name("w");
  weird.set_op("SomethingTensorFlowHasButWeDoNot");
  EXPECT_STATUS(
      ImportGraphDef(G({weird, N("b", "Identity", {"w:2147483647"})})).status(), kInvalidArgument,
      "(SomethingTensorFlowHasButWeDoNot, not a registered op) may have at most 65536 outputs");
  EXPECT_TRUE(ImportGraphDef(G({weird, N("b", "Identity", {"w:65535"})})).ok());
}

TEST(GraphTest, HugeNumberAttrIsInvalidArgument) {
  NodeDef sum = N("s", "AddN", {});
  SetAttr(&sum, "N", int64_t{1000000000});
  EXPECT_STATUS(ImportGraphDef(G({sum})).status(), kInvalidArgument,
                "attr 'N' of node 's' (AddN) is 1000000000");
}

TEST(GraphTest, PruneKeepsOnlyAncestors) {
  auto g = ImportGraphDef(G({N("a", "Placeholder", {}), N("b", "Identity", {"a"}),
                             N("c", "Identity", {"a"}), N("d", "NoOp", {"^b"})}));
  ASSERT_TRUE(g.ok());
  PruneForRoots(g->get(), {(*g)->FindNode("d")});
  EXPECT_EQ((*g)->num_nodes(), 3);
  EXPECT_EQ((*g)->FindNode("c"), nullptr);
  auto order = TopologicalSort(**g);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ((*order).front()->name(), "a");
  EXPECT_EQ((*order).back()->name(), "d");
}

TEST(GraphTest, ExtendFailureLeavesGraphUnchanged) {
  auto g = ImportGraphDef(G({N("a", "Placeholder", {})}));
  ASSERT_TRUE(g.ok());
  EXPECT_STATUS(
      ExtendGraph(G({N("b", "Identity", {"a"}), N("c", "Identity", {"missing"})}), g->get()),
      kInvalidArgument, "missing");
  EXPECT_EQ((*g)->num_nodes(), 1);
  ASSERT_OK(ExtendGraph(G({N("b", "Identity", {"a"})}), g->get()));
  EXPECT_EQ((*g)->num_nodes(), 2);
}

TEST(GraphTest, ToDotHasNodesAndEdges) {
  auto g = ImportGraphDef(
      G({N("a", "Placeholder", {}), N("b", "Identity", {"a"}), N("d", "NoOp", {"^b"})}));
  ASSERT_TRUE(g.ok());
  std::string dot = ToDot(**g);
  EXPECT_NE(dot.find("digraph"), std::string::npos);
  EXPECT_NE(dot.find("label=\"b\\nIdentity\""), std::string::npos);
  EXPECT_NE(dot.find("n0 -> n1 [label=\"float\"]"), std::string::npos);
  EXPECT_NE(dot.find("n1 -> n2 [style=dashed]"), std::string::npos);
}

TEST(ParseTensorNameTest, Forms) {
  std::string node;
  int port;
  ASSERT_OK(ParseTensorName("x", &node, &port));
  EXPECT_EQ(node, "x");
  EXPECT_EQ(port, 0);
  ASSERT_OK(ParseTensorName("scope/x:3", &node, &port));
  EXPECT_EQ(node, "scope/x");
  EXPECT_EQ(port, 3);
  EXPECT_STATUS(ParseTensorName("x:y", &node, &port), kInvalidArgument, "malformed");
  EXPECT_STATUS(ParseTensorName(":1", &node, &port), kInvalidArgument, "malformed");
}

// A graph with one Placeholder "x" whose shape attr has no dims, written by
// producer `producer`.
GraphDef EmptyShapePlaceholderGraph(int producer) {
  NodeDef x = N("x", "Placeholder", {});
  SetAttr(&x, "shape", PartialTensorShape({}));
  GraphDef def = G({x});
  def.mutable_versions()->set_producer(producer);
  return def;
}

PartialTensorShape PlaceholderShape(const Graph& graph) {
  PartialTensorShape shape;
  EXPECT_OK(GetNodeAttr(graph.FindNode("x")->def(), "shape", &shape));
  return shape;
}

TEST(GraphVersionsTest, EmptyPlaceholderShapeIsUnknownUpToProducer21) {
  auto old = ImportGraphDef(EmptyShapePlaceholderGraph(21));
  ASSERT_OK(old.status());
  EXPECT_TRUE(PlaceholderShape(**old).unknown_rank());
  EXPECT_EQ((*old)->versions().producer(), 21);
  auto unversioned = ImportGraphDef(G({EmptyShapePlaceholderGraph(0).node(0)}));
  ASSERT_OK(unversioned.status());
  EXPECT_TRUE(PlaceholderShape(**unversioned).unknown_rank());
  auto scalar = ImportGraphDef(EmptyShapePlaceholderGraph(22));
  ASSERT_OK(scalar.status());
  EXPECT_EQ(PlaceholderShape(**scalar).DebugString(), "[]");
}

TEST(GraphVersionsTest, OldProducersKeepPlaceholderShapesWithDims) {
  NodeDef x = N("x", "Placeholder", {});
  SetAttr(&x, "shape", PartialTensorShape({-1, 2}));
  GraphDef def = G({x});
  def.mutable_versions()->set_producer(8);
  auto g = ImportGraphDef(def);
  ASSERT_OK(g.status());
  EXPECT_EQ(PlaceholderShape(**g).DebugString(), "[?,2]");
}

TEST(GraphVersionsTest, RefusesGraphsForNewerOrOtherConsumers) {
  GraphDef def = G({N("a", "Placeholder", {})});
  def.mutable_versions()->set_producer(kGraphDefVersion + 100);
  def.mutable_versions()->set_min_consumer(kGraphDefVersion + 1);
  EXPECT_STATUS(ImportGraphDef(def).status(), kInvalidArgument,
                "GraphDef min consumer version 1184 is above tensorgrid's GraphDef version 1183");
  def.mutable_versions()->set_min_consumer(12);
  ASSERT_OK(ImportGraphDef(def).status());
  def.mutable_versions()->add_bad_consumers(kGraphDefVersion);
  EXPECT_STATUS(ImportGraphDef(def).status(), kInvalidArgument,
                "GraphDef disallows consumer version 1183");
  def.mutable_versions()->clear_bad_consumers();
  def.mutable_versions()->set_producer(-1);
  EXPECT_STATUS(ImportGraphDef(def).status(), kInvalidArgument,
                "GraphDef producer version -1 is below the oldest producer");
}

TEST(GraphVersionsTest, ExtendKeepsOneProducerAndMergesConsumers) {
  GraphDef def = G({N("a", "Placeholder", {})});
  *def.mutable_versions() = CurrentGraphDefVersions();
  auto g = ImportGraphDef(def);
  ASSERT_OK(g.status());
  GraphDef more = G({N("b", "Identity", {"a"})});
  more.mutable_versions()->set_producer(21);
  EXPECT_STATUS(ExtendGraph(more, g->get()), kInvalidArgument,
                "cannot extend a graph of GraphDef producer version 1183 with nodes of producer "
                "version 21");
  EXPECT_EQ((*g)->num_nodes(), 1);
  *more.mutable_versions() = CurrentGraphDefVersions();
  more.mutable_versions()->set_min_consumer(30);
  more.mutable_versions()->add_bad_consumers(40);
  ASSERT_OK(ExtendGraph(more, g->get()));
  EXPECT_EQ((*g)->versions().min_consumer(), 30);
  ASSERT_EQ((*g)->versions().bad_consumers_size(), 1);
  EXPECT_EQ((*g)->versions().bad_consumers(0), 40);
}

}  // namespace
}  // namespace tensorgrid
