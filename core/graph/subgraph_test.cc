#include "core/graph/subgraph.h"

#include "core/framework/attr_value_util.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

std::unique_ptr<Graph> SquareGraph() {
  GraphDef g;
  NodeDef* x = g.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  SetAttr(x, "dtype", DT_FLOAT);
  SetAttr(x, "shape", PartialTensorShape({2}));
  NodeDef* y = g.add_node();
  y->set_name("y");
  y->set_op("Mul");
  y->add_input("x");
  y->add_input("x");
  SetAttr(y, "T", DT_FLOAT);
  NodeDef* unused = g.add_node();
  unused->set_name("unused");
  unused->set_op("NoOp");
  auto graph = ImportGraphDef(g);
  EXPECT_TRUE(graph.ok());
  return std::move(graph).value();
}

TEST(SubgraphTest, FeedsBecomeArgsFetchesBecomeRetvals) {
  auto g = SquareGraph();
  std::vector<FeedSpec> specs;
  ASSERT_OK(RewriteGraphForExecution(g.get(), {"x"}, {"y:0"}, {}, &specs));
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].dtype, DT_FLOAT);
  EXPECT_EQ(specs[0].shape.DebugString(), "[2]");
  EXPECT_EQ(g->FindNode("x"), nullptr);       // fed placeholder pruned
  EXPECT_EQ(g->FindNode("unused"), nullptr);  // not needed
  Node* y = g->FindNode("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->input_edge(0)->src->op(), "_Arg");
  EXPECT_EQ(y->input_edge(1)->src->op(), "_Arg");
  EXPECT_EQ(y->out_edges()[0]->dst->op(), "_Retval");
}

TEST(SubgraphTest, TargetsAreKept) {
  auto g = SquareGraph();
  std::vector<FeedSpec> specs;
  ASSERT_OK(RewriteGraphForExecution(g.get(), {}, {}, {"unused"}, &specs));
  EXPECT_EQ(g->num_nodes(), 1);
}

TEST(SubgraphTest, Errors) {
  std::vector<FeedSpec> specs;
  auto g = SquareGraph();
  EXPECT_STATUS(RewriteGraphForExecution(g.get(), {"x", "x"}, {"y"}, {}, &specs), kInvalidArgument,
                "fed twice");
  EXPECT_STATUS(RewriteGraphForExecution(g.get(), {"nope"}, {"y"}, {}, &specs), kNotFound, "nope");
  EXPECT_STATUS(RewriteGraphForExecution(g.get(), {}, {"y:1"}, {}, &specs), kInvalidArgument,
                "has 1 output");
  EXPECT_STATUS(RewriteGraphForExecution(g.get(), {}, {}, {"ghost"}, &specs), kNotFound, "ghost");
  EXPECT_EQ(g->num_nodes(), 3);  // failed rewrites change nothing
}

// A node whose op is not registered has no known outputs: fetching or
// feeding one says so, rather than that it has none.
TEST(SubgraphTest, TensorOfAnUnregisteredOpNamesTheOp) {
  GraphDef def;
  NodeDef* fancy = def.add_node();
  fancy->set_name("fancy");
  fancy->set_op("FancyMul");
  auto g = ImportGraphDef(def);
  ASSERT_OK(g.status());
  std::vector<FeedSpec> specs;
  EXPECT_STATUS(RewriteGraphForExecution(g->get(), {}, {"fancy"}, {}, &specs), kUnimplemented,
                "fetch 'fancy': op 'FancyMul' (node 'fancy') is not registered, so the node "
                "cannot run");
  EXPECT_STATUS(RewriteGraphForExecution(g->get(), {"fancy:0"}, {}, {}, &specs), kUnimplemented,
                "feed 'fancy:0': op 'FancyMul' (node 'fancy') is not registered");
}

}  // namespace
}  // namespace tensorgrid
