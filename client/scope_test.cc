// Scope and NodeBuilder over a few ops registered here, so that these tests
// depend on no kernel library. (Literal inputs need "Const": see ops_test.)
#include "client/scope.h"

#include <string>
#include <vector>

#include "client/node_builder.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "core/platform/status.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

TG_REGISTER_OP("ScopeTestSource").Output("out: float").Attr("scale: float = 1.0");
TG_REGISTER_OP("ScopeTestBinary")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {float, int32}");
TG_REGISTER_OP("ScopeTestTwoOutputs").Output("a: float").Output("b: int64");
TG_REGISTER_OP("ScopeTestList")
    .Input("values: N * T")
    .Input("axis: Tidx")
    .Output("out: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = DT_INT32");
TG_REGISTER_OP("ScopeTestVariable").Output("ref: Ref(dtype)").Attr("dtype: type");
// Output 0 is [n] for its attr n; its inputs' shapes are written down, and n
// < 0 fails without naming the node.
std::vector<std::string> seen_input_shapes;
TG_REGISTER_OP("ScopeTestShaped")
    .Input("in: N * float")
    .Output("out: float")
    .Attr("N: int >= 0")
    .Attr("n: int")
    .SetShapeFn([](ShapeInferenceContext& c) {
      seen_input_shapes.clear();
      for (int i = 0; i < c.num_inputs(); ++i)
        seen_input_shapes.push_back(c.input(i).DebugString());
      int64_t n = 0;
      TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "n", &n));
      if (n < 0) return errors::InvalidArgument("n is negative");
      c.set_output(0, PartialTensorShape({n}));
      return absl::OkStatus();
    });
TG_REGISTER_OP("ScopeTestAssign")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("out: Ref(T)")
    .Attr("T: type");
TG_REGISTER_OP("ScopeTestIntInput").Input("x: int32").Output("y: float");

Output Source(const Scope& scope) {
  return Output(NodeBuilder(scope, "ScopeTestSource").Finalize());
}
Output Binary(const Scope& scope, Input x, Input y) {
  return Output(NodeBuilder(scope, "ScopeTestBinary").Input(x).Input(y).Finalize());
}

const NodeDef& Node(const Scope& scope, const std::string& name) {
  static GraphDef graph;
  EXPECT_TRUE(scope.ToGraphDef(&graph).ok());
  for (const NodeDef& node : graph.node()) {
    if (node.name() == name) return node;
  }
  ADD_FAILURE() << "no node " << name;
  static NodeDef none;
  return none;
}

std::vector<std::string> Inputs(const NodeDef& node) {
  return std::vector<std::string>(node.input().begin(), node.input().end());
}

void ExpectError(const Scope& scope, const std::string& substring) {
  EXPECT_EQ(scope.status().code(), absl::StatusCode::kInvalidArgument) << scope.status();
  EXPECT_NE(scope.status().message().find(substring), std::string::npos) << scope.status();
}

TEST(ScopeTest, OpsGetUniqueNamesFromTheirType) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(Source(root).node_name(), "ScopeTestSource");
  EXPECT_EQ(Source(root).node_name(), "ScopeTestSource_1");
  EXPECT_EQ(Source(root).node_name(), "ScopeTestSource_2");
  EXPECT_EQ(Source(root.WithOpName("x")).node_name(), "x");
  EXPECT_EQ(root.GetUniqueNameForOp("x"), "x_1");
  EXPECT_TRUE(root.ok());
}

TEST(ScopeTest, DefaultNamesSkipNamesTakenWithWithOpName) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(Source(root.WithOpName("ScopeTestSource_1")).node_name(), "ScopeTestSource_1");
  EXPECT_EQ(Source(root).node_name(), "ScopeTestSource");
  EXPECT_EQ(Source(root).node_name(), "ScopeTestSource_2");
}

TEST(ScopeTest, WithOpNameJoinsFragments) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(Source(root.WithOpName("layer", 3, "_w")).node_name(), "layer3_w");
}

TEST(ScopeTest, SubScopesPrefixNamesAndAreUnique) {
  Scope root = Scope::NewRootScope();
  Scope layer = root.NewSubScope("layer");
  EXPECT_EQ(layer.name_scope(), "layer");
  EXPECT_EQ(Source(layer).node_name(), "layer/ScopeTestSource");
  EXPECT_EQ(Source(layer).node_name(), "layer/ScopeTestSource_1");
  EXPECT_EQ(Source(layer.WithOpName("w")).node_name(), "layer/w");
  Scope inner = layer.NewSubScope("inner");
  EXPECT_EQ(Source(inner).node_name(), "layer/inner/ScopeTestSource");
  // A second "layer" scope is "layer_1"; names inside it start over.
  Scope layer_again = root.NewSubScope("layer");
  EXPECT_EQ(layer_again.name_scope(), "layer_1");
  EXPECT_EQ(Source(layer_again).node_name(), "layer_1/ScopeTestSource");
  // The root's own names are independent of the scopes'.
  EXPECT_EQ(Source(root).node_name(), "ScopeTestSource");
}

TEST(ScopeTest, EmptySubScopeKeepsPrefixButDropsOpName) {
  Scope root = Scope::NewRootScope();
  Scope named = root.NewSubScope("s").WithOpName("x");
  Scope same = named.NewSubScope("");
  EXPECT_EQ(same.name_scope(), "s");
  EXPECT_EQ(Source(same).node_name(), "s/ScopeTestSource");
}

TEST(ScopeTest, NodeMayShareItsNameWithAScope) {
  Scope root = Scope::NewRootScope();
  Source(root.NewSubScope("x"));
  EXPECT_EQ(Source(root.WithOpName("x")).node_name(), "x");
  EXPECT_TRUE(root.ok()) << root.status();
}

TEST(ScopeTest, DuplicateExactNameIsAnError) {
  Scope root = Scope::NewRootScope();
  Source(root.WithOpName("x"));
  Output again = Source(root.WithOpName("x"));
  EXPECT_FALSE(again.valid());
  ExpectError(root, "duplicate node name 'x'");
}

TEST(ScopeTest, DeviceIsSetOnNodes) {
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Source(ps.WithOpName("v"));
  Source(root.WithOpName("w"));
  EXPECT_EQ(ps.device(), "/job:ps/task:0");
  EXPECT_EQ(Node(root, "v").device(), "/job:ps/task:0");
  EXPECT_EQ(Node(root, "w").device(), "");
}

TEST(ScopeTest, ControlDependenciesAccumulateAndClear) {
  Scope root = Scope::NewRootScope();
  Output a = Source(root.WithOpName("a"));
  Output b = Source(root.WithOpName("b"));
  Scope after_a = root.WithControlDependencies({a.op()});
  Binary(after_a.WithOpName("c"), a, b);
  Scope after_ab = after_a.WithControlDependencies(b);  // an Output works too
  Source(after_ab.WithOpName("d"));
  Source(after_ab.WithNoControlDependencies().WithOpName("e"));
  Source(after_a.WithControlDependencies({a.op(), b.op()}).WithOpName("f"));
  EXPECT_EQ(Inputs(Node(root, "c")), (std::vector<std::string>{"a", "b", "^a"}));
  EXPECT_EQ(Inputs(Node(root, "d")), (std::vector<std::string>{"^a", "^b"}));
  EXPECT_TRUE(Node(root, "e").input().empty());
  EXPECT_EQ(Inputs(Node(root, "f")), (std::vector<std::string>{"^a", "^b"}));
}

TEST(ScopeTest, ColocateWithSetsClassAttr) {
  Scope root = Scope::NewRootScope();
  Output v = Source(root.WithOpName("v"));
  Scope with_v = root.ColocateWith(v);
  Output w = Source(with_v.WithOpName("w"));
  // Colocating with a colocated node joins its group, not a chain.
  Source(root.ColocateWith(w.op()).WithOpName("x"));
  Source(with_v.ClearColocation().WithOpName("y"));
  std::vector<std::string> classes;
  ASSERT_TRUE(GetNodeAttr(Node(root, "w"), "_class", &classes).ok());
  EXPECT_EQ(classes, std::vector<std::string>{"loc:@v"});
  ASSERT_TRUE(GetNodeAttr(Node(root, "x"), "_class", &classes).ok());
  EXPECT_EQ(classes, std::vector<std::string>{"loc:@v"});
  EXPECT_FALSE(HasNodeAttr(Node(root, "y"), "_class"));
  EXPECT_FALSE(HasNodeAttr(Node(root, "v"), "_class"));
}

TEST(ScopeTest, ColocateWithForeignOpIsAnError) {
  Scope root = Scope::NewRootScope();
  Scope other = Scope::NewRootScope();
  Output elsewhere = Source(other.WithOpName("elsewhere"));
  root.ColocateWith(elsewhere);
  ExpectError(root, "'elsewhere' is not a node of this scope's graph");
}

TEST(ScopeTest, UnknownOpIsAnErrorNamingTheNode) {
  Scope root = Scope::NewRootScope();
  Operation op = NodeBuilder(root.WithOpName("mystery"), "NoSuchOp").Finalize();
  EXPECT_FALSE(op.valid());
  ExpectError(root, "node 'mystery': unknown op 'NoSuchOp'");
}

TEST(ScopeTest, FirstErrorIsKeptAndLaterBuildingIsANoOp) {
  Scope root = Scope::NewRootScope();
  Source(root);
  NodeBuilder(root, "NoSuchOp").Finalize();
  Scope child = root.NewSubScope("child");
  Output later = Source(child);
  Binary(root, later, later);
  NodeBuilder(root, "AnotherMissingOp").Finalize();
  EXPECT_FALSE(later.valid());
  EXPECT_EQ(root.num_nodes(), 1);
  ExpectError(child, "unknown op 'NoSuchOp'");
  GraphDef graph;
  absl::Status s = root.ToGraphDef(&graph);
  EXPECT_EQ(s, root.status());
  // The status is shared with every scope of the graph, the root included.
  root.UpdateStatus(absl::InternalError("later"));
  ExpectError(root, "NoSuchOp");
}

TEST(ScopeTest, TypeAttrIsInferredFromInputs) {
  Scope root = Scope::NewRootScope();
  Output a = Source(root);
  Output z = Binary(root, a, a);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(z.type(), DT_FLOAT);
  DataType t;
  ASSERT_TRUE(GetNodeAttr(Node(root, "ScopeTestBinary"), "T", &t).ok());
  EXPECT_EQ(t, DT_FLOAT);
}

TEST(ScopeTest, MismatchedInputTypesAreAnError) {
  Scope root = Scope::NewRootScope();
  Output f = Source(root);
  Output i = Output(NodeBuilder(root.WithOpName("two"), "ScopeTestTwoOutputs").Finalize(), 1);
  EXPECT_EQ(i.type(), DT_INT64);
  Output z = Binary(root.WithOpName("add"), f, i);
  EXPECT_FALSE(z.valid());
  ExpectError(root, "node 'add' (ScopeTestBinary): input 'y' gives T = int64");
}

TEST(ScopeTest, DisallowedTypeIsAnError) {
  Scope root = Scope::NewRootScope();
  Operation two = NodeBuilder(root.WithOpName("two"), "ScopeTestTwoOutputs").Finalize();
  Binary(root.WithOpName("add"), two.output(1), two.output(1));
  ExpectError(root, "node 'add'");
  ExpectError(root, "not one of the allowed types");
}

TEST(ScopeTest, FixedInputTypeIsChecked) {
  Scope root = Scope::NewRootScope();
  NodeBuilder(root.WithOpName("n"), "ScopeTestIntInput").Input(Source(root)).Finalize();
  ExpectError(root, "node 'n' (ScopeTestIntInput): input 'x' must be int32, got float");
}

TEST(ScopeTest, MultiOutputOpIsNotAnInput) {
  Scope root = Scope::NewRootScope();
  Operation two = NodeBuilder(root.WithOpName("two"), "ScopeTestTwoOutputs").Finalize();
  Output a = Source(root);
  Binary(root.WithOpName("b"), a, Output(two));
  ExpectError(root, "node 'b' (ScopeTestBinary): input argument 1: operation 'two' has 2 outputs");
}

TEST(ScopeTest, OutputOfAnotherGraphIsAnError) {
  Scope root = Scope::NewRootScope();
  Scope other = Scope::NewRootScope();
  Output foreign = Source(other.WithOpName("foreign"));
  Binary(root, foreign, foreign);
  ExpectError(root, "'foreign' is a node of another graph (built from another root scope)");
  // Also where this graph has a node of that name: never the namesake.
  Scope third = Scope::NewRootScope();
  Source(third.WithOpName("foreign"));
  Binary(third, foreign, foreign);
  ExpectError(third, "'foreign' is a node of another graph");
  // An Operation made by name only (graph unknown) is checked by name.
  Scope fourth = Scope::NewRootScope();
  Binary(fourth, Output(Operation("foreign", {DT_FLOAT}), 0), foreign);
  ExpectError(fourth, "'foreign' is not a node of this scope's graph");
}

TEST(ScopeTest, ListArgumentSetsNumberAndTypeAttrs) {
  Scope root = Scope::NewRootScope();
  Output a = Source(root.WithOpName("a"));
  Output b = Source(root.WithOpName("b"));
  Operation cat = NodeBuilder(root.WithOpName("cat"), "ScopeTestList")
                      .Input(InputList{a, b, Output(a)})
                      .Input(Input("imported", 2, DT_INT64))
                      .Finalize();
  ASSERT_TRUE(root.ok()) << root.status();
  const NodeDef& node = Node(root, "cat");
  EXPECT_EQ(Inputs(node), (std::vector<std::string>{"a", "b", "a", "imported:2"}));
  int64_t n;
  DataType t, tidx;
  ASSERT_TRUE(GetNodeAttr(node, "N", &n).ok());
  ASSERT_TRUE(GetNodeAttr(node, "T", &t).ok());
  ASSERT_TRUE(GetNodeAttr(node, "Tidx", &tidx).ok());
  EXPECT_EQ(n, 3);
  EXPECT_EQ(t, DT_FLOAT);
  EXPECT_EQ(tidx, DT_INT64);
  EXPECT_EQ(cat.output_type(0), DT_FLOAT);
}

TEST(ScopeTest, RefInputsAreTypedAndChecked) {
  Scope root = Scope::NewRootScope();
  Operation var =
      NodeBuilder(root.WithOpName("var"), "ScopeTestVariable").Attr("dtype", DT_FLOAT).Finalize();
  EXPECT_EQ(var.output_type(0), DT_FLOAT_REF);
  Operation assign =
      NodeBuilder(root, "ScopeTestAssign").Input(Output(var)).Input(Source(root)).Finalize();
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(assign.output_type(0), DT_FLOAT_REF);
  // A reference output feeds a value input as its plain dtype.
  EXPECT_EQ(Binary(root, Output(var), Source(root)).type(), DT_FLOAT);
  NodeBuilder(root.WithOpName("bad"), "ScopeTestAssign")
      .Input(Source(root))
      .Input(Source(root))
      .Finalize();
  ExpectError(root, "node 'bad' (ScopeTestAssign): input 'ref' must be a reference");
}

TEST(ScopeTest, AttrsAreValidatedAndDefaultsFilled) {
  Scope root = Scope::NewRootScope();
  Source(root.WithOpName("s"));
  float scale = 0;
  ASSERT_TRUE(GetNodeAttr(Node(root, "s"), "scale", &scale).ok());
  EXPECT_EQ(scale, 1.0f);
  NodeBuilder(root.WithOpName("t"), "ScopeTestSource").Attr("scale", true).Finalize();
  ExpectError(root, "attr 'scale' of node 't'");
}

TEST(ScopeTest, WrongNumberOfInputArgumentsIsAnError) {
  Scope root = Scope::NewRootScope();
  NodeBuilder(root.WithOpName("b"), "ScopeTestBinary").Input(Source(root)).Finalize();
  ExpectError(root, "node 'b' (ScopeTestBinary) was given 1 input arguments, but the op takes 2");
}

Output Shaped(const Scope& scope, int64_t n, std::vector<Output> inputs = {}) {
  NodeBuilder builder(scope, "ScopeTestShaped");
  builder.Input(InputList(inputs)).Attr("n", n);
  return Output(builder.Finalize(), 0);
}

TEST(ScopeTest, ShapeFunctionsRunAsNodesAreBuilt) {
  Scope root = Scope::NewRootScope();
  Output three = Shaped(root, 3);
  Output source = Source(root);  // an op without a shape function
  Output control = Shaped(root.WithControlDependencies({source.op()}), 1, {three, source});
  ASSERT_TRUE(root.ok()) << root.status();
  // Inputs in order, control inputs left out, unknown where nothing is known.
  EXPECT_EQ(seen_input_shapes, (std::vector<std::string>{"[3]", "<unknown>"}));
  EXPECT_EQ(root.InferredShape(three).DebugString(), "[3]");
  EXPECT_EQ(root.InferredShape(control).DebugString(), "[1]");
  EXPECT_TRUE(root.InferredShape(source).unknown_rank());
  // A shape function's error stops the build, naming the node.
  Shaped(root.WithOpName("neg"), -1, {three});
  ExpectError(root, "node 'neg' (ScopeTestShaped): n is negative");
}

TEST(ScopeTest, ToGraphDefListsNodesInBuildOrder) {
  Scope root = Scope::NewRootScope();
  Output a = Source(root.WithOpName("a"));
  Binary(root.NewSubScope("s").WithDevice("/job:worker/task:1"), a, a);
  GraphDef graph;
  ASSERT_TRUE(root.ToGraphDef(&graph).ok());
  ASSERT_EQ(graph.node_size(), 2);
  EXPECT_EQ(graph.node(0).name(), "a");
  EXPECT_EQ(graph.node(0).op(), "ScopeTestSource");
  EXPECT_TRUE(graph.node(0).input().empty());
  const NodeDef& add = graph.node(1);
  EXPECT_EQ(add.name(), "s/ScopeTestBinary");
  EXPECT_EQ(add.op(), "ScopeTestBinary");
  EXPECT_EQ(Inputs(add), (std::vector<std::string>{"a", "a"}));
  EXPECT_EQ(add.device(), "/job:worker/task:1");
  EXPECT_EQ(add.attr().size(), 1u);
  EXPECT_EQ(add.attr().at("T").type(), DT_FLOAT);

  EXPECT_EQ(root.num_nodes(), 2);
  GraphDef tail;
  ASSERT_TRUE(root.ToGraphDef(&tail, 1).ok());
  ASSERT_EQ(tail.node_size(), 1);
  EXPECT_EQ(tail.node(0).name(), "s/ScopeTestBinary");
}

}  // namespace
}  // namespace tensorgrid
