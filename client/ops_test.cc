// The ops:: wrappers against the op definitions of //kernels:all_kernels:
// each builds the TensorFlow op with the right inputs, attrs and output dtypes.
#include <string>
#include <vector>

#include "client/ops/standard_ops.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

class OpsTest : public ::testing::Test {
 protected:
  // The node `name` of the graph built so far (the test fails if there is none).
  NodeDef Node(const std::string& name) {
    GraphDef graph;
    absl::Status s = root_.ToGraphDef(&graph);
    EXPECT_TRUE(s.ok()) << s;
    for (const NodeDef& node : graph.node()) {
      if (node.name() == name) return node;
    }
    ADD_FAILURE() << "no node " << name;
    return NodeDef();
  }
  template <typename T>
  T Attr(const std::string& node, const std::string& attr) {
    T value{};
    absl::Status s = GetNodeAttr(Node(node), attr, &value);
    EXPECT_TRUE(s.ok()) << s;
    return value;
  }
  std::vector<std::string> Inputs(const std::string& node) {
    NodeDef n = Node(node);
    return std::vector<std::string>(n.input().begin(), n.input().end());
  }
  void ExpectOk() { ASSERT_TRUE(root_.ok()) << root_.status(); }

  Scope root_ = Scope::NewRootScope();
};

TEST_F(OpsTest, ConstHoldsLiteralOrTensor) {
  Output c = ops::Const(root_, {{1.f, 2.f}, {3.f, 4.f}});
  Output s = ops::Const(root_.WithOpName("s"), std::string("hi"));
  Output filled = ops::Const(root_.WithOpName("filled"), 7, TensorShape({2, 3}));
  ExpectOk();
  EXPECT_EQ(c.node_name(), "Const");
  EXPECT_EQ(c.type(), DT_FLOAT);
  EXPECT_EQ(s.type(), DT_STRING);
  EXPECT_EQ(filled.type(), DT_INT32);
  Tensor value = Attr<Tensor>("Const", "value");
  EXPECT_EQ(value.shape(), TensorShape({2, 2}));
  EXPECT_EQ(value.data<float>()[3], 4.f);
  EXPECT_EQ(Attr<DataType>("Const", "dtype"), DT_FLOAT);
  EXPECT_EQ(Attr<Tensor>("filled", "value").shape(), TensorShape({2, 3}));
}

TEST_F(OpsTest, LiteralInputsBecomeConstNodes) {
  auto m = ops::MatMul(root_.WithOpName("m"), {{3.f, 2.f}}, {{-1.f}, {2.f}});
  ExpectOk();
  EXPECT_EQ(Inputs("m"), (std::vector<std::string>{"Const", "Const_1"}));
  EXPECT_EQ(Attr<Tensor>("Const_1", "value").shape(), TensorShape({2, 1}));
  EXPECT_EQ(m.product.type(), DT_FLOAT);
}

TEST_F(OpsTest, ConstsOfAScopeShareItsDeviceAndControlDeps) {
  auto noop = ops::NoOp(root_.WithOpName("first"));
  Scope s = root_.WithDevice("/job:ps/task:0").WithControlDependencies({noop});
  ops::Add(s.WithOpName("add"), 1.f, 2.f);
  ExpectOk();
  EXPECT_EQ(Node("Const").device(), "/job:ps/task:0");
  EXPECT_EQ(Inputs("Const"), std::vector<std::string>{"^first"});
  EXPECT_EQ(Inputs("add"), (std::vector<std::string>{"Const", "Const_1", "^first"}));
}

TEST_F(OpsTest, ConstFromMalformedLiteralIsAnError) {
  ops::Const(root_, {{1.f, 2.f}, {3.f}});
  EXPECT_EQ(root_.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(OpsTest, PlaceholderAndFriends) {
  auto x = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape({-1, 2}));
  auto y = ops::Placeholder(root_.WithOpName("y"), DT_INT32);
  auto d = ops::PlaceholderWithDefault(root_.WithOpName("d"), {1, 2}, {2});
  auto id = ops::Identity(root_.WithOpName("id"), x);
  auto noop = ops::NoOp(root_.WithOpName("noop"));
  ExpectOk();
  EXPECT_EQ(Node("x").op(), "Placeholder");
  EXPECT_EQ(Attr<DataType>("x", "dtype"), DT_FLOAT);
  EXPECT_EQ(Attr<PartialTensorShape>("x", "shape").DebugString(), "[?,2]");
  EXPECT_TRUE(Attr<PartialTensorShape>("y", "shape").unknown_rank());
  EXPECT_EQ(y.output.type(), DT_INT32);
  EXPECT_EQ(Attr<DataType>("d", "dtype"), DT_INT32);
  EXPECT_EQ(d.output.type(), DT_INT32);
  EXPECT_EQ(Attr<DataType>("id", "T"), DT_FLOAT);
  EXPECT_EQ(id.output.type(), DT_FLOAT);
  EXPECT_EQ(Node("noop").op(), "NoOp");
  EXPECT_EQ(noop.operation.num_outputs(), 0);
}

TEST_F(OpsTest, ShapeOps) {
  auto x = ops::Placeholder(root_, DT_DOUBLE);
  auto r = ops::Reshape(root_.WithOpName("r"), x, {-1, 4});
  auto t = ops::Transpose(root_.WithOpName("t"), r, {1, 0});
  auto s = ops::Shape(root_.WithOpName("s"), x, ops::Shape::OutType(DT_INT64));
  auto f = ops::Fill(root_.WithOpName("f"), {2, 3}, 0.5f);
  auto z = ops::ZerosLike(root_.WithOpName("z"), x);
  auto o = ops::OnesLike(root_.WithOpName("o"), x);
  ExpectOk();
  EXPECT_EQ(Attr<DataType>("r", "T"), DT_DOUBLE);
  EXPECT_EQ(Attr<DataType>("r", "Tshape"), DT_INT32);
  EXPECT_EQ(r.output.type(), DT_DOUBLE);
  EXPECT_EQ(Attr<DataType>("t", "Tperm"), DT_INT32);
  EXPECT_EQ(t.y.type(), DT_DOUBLE);
  EXPECT_EQ(Attr<DataType>("s", "out_type"), DT_INT64);
  EXPECT_EQ(s.output.type(), DT_INT64);
  EXPECT_EQ(Attr<DataType>("f", "T"), DT_FLOAT);
  EXPECT_EQ(f.output.type(), DT_FLOAT);
  EXPECT_EQ(z.y.type(), DT_DOUBLE);
  EXPECT_EQ(o.y.type(), DT_DOUBLE);
}

TEST_F(OpsTest, ConcatIsConcatV2WithAListInput) {
  auto a = ops::Placeholder(root_.WithOpName("a"), DT_FLOAT);
  auto b = ops::Placeholder(root_.WithOpName("b"), DT_FLOAT);
  auto c = ops::Concat(root_, {a, b, {{1.f}}}, 0);
  ExpectOk();
  EXPECT_EQ(c.operation.name(), "Concat");
  EXPECT_EQ(Node("Concat").op(), "ConcatV2");
  EXPECT_EQ(Attr<int64_t>("Concat", "N"), 3);
  EXPECT_EQ(Attr<DataType>("Concat", "T"), DT_FLOAT);
  EXPECT_EQ(Attr<DataType>("Concat", "Tidx"), DT_INT32);
  EXPECT_EQ(Inputs("Concat"), (std::vector<std::string>{"a", "b", "Const", "Const_1"}));
}

TEST_F(OpsTest, ElementwiseMathOps) {
  auto x = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT);
  std::vector<Output> outs = {
      ops::Add(root_, x, 1.f),   ops::AddV2(root_, x, x),   ops::Sub(root_, x, x),
      ops::Mul(root_, x, 2.f),   ops::RealDiv(root_, x, x), ops::Maximum(root_, x, 0.f),
      ops::Minimum(root_, x, x), ops::Neg(root_, x),        ops::Square(root_, x),
      ops::Sqrt(root_, x),       ops::Rsqrt(root_, x),      ops::Exp(root_, x),
      ops::Log(root_, x),        ops::Tanh(root_, x),       ops::Sigmoid(root_, x),
  };
  ExpectOk();
  const std::vector<std::string> names = {"Add",     "AddV2",   "Sub", "Mul",    "RealDiv",
                                          "Maximum", "Minimum", "Neg", "Square", "Sqrt",
                                          "Rsqrt",   "Exp",     "Log", "Tanh",   "Sigmoid"};
  ASSERT_EQ(outs.size(), names.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    EXPECT_EQ(outs[i].node_name(), names[i]);
    EXPECT_EQ(Node(names[i]).op(), names[i]);
    EXPECT_EQ(Attr<DataType>(names[i], "T"), DT_FLOAT) << names[i];
    EXPECT_EQ(outs[i].type(), DT_FLOAT) << names[i];
  }
  EXPECT_EQ(Inputs("Add"), (std::vector<std::string>{"x", "Const"}));
}

TEST_F(OpsTest, AddOfFloatAndInt32IsAnErrorNamingTheNode) {
  auto x = ops::Placeholder(root_, DT_FLOAT);
  auto sum = ops::Add(root_.WithOpName("bad_add"), x, 1);
  EXPECT_FALSE(sum.z.valid());
  EXPECT_EQ(root_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(root_.status().message().find("node 'bad_add' (Add): input 'y' gives T = int32"),
            std::string::npos)
      << root_.status();
}

TEST_F(OpsTest, MatMulAttrs) {
  auto a = ops::Placeholder(root_, DT_FLOAT);
  auto m = ops::MatMul(root_.WithOpName("m"), a, a, ops::MatMul::TransposeB(true));
  auto n =
      ops::MatMul(root_.WithOpName("n"), a, a, ops::MatMul::TransposeA(true).TransposeB(false));
  ExpectOk();
  EXPECT_FALSE(Attr<bool>("m", "transpose_a"));
  EXPECT_TRUE(Attr<bool>("m", "transpose_b"));
  EXPECT_TRUE(Attr<bool>("n", "transpose_a"));
  EXPECT_EQ(m.product.type(), DT_FLOAT);
  EXPECT_EQ(Output(n).name(), "n:0");
}

TEST_F(OpsTest, Reductions) {
  auto x = ops::Placeholder(root_, DT_FLOAT);
  auto sum = ops::Sum(root_.WithOpName("sum"), x, {0, 1}, ops::Sum::KeepDims(true));
  auto mean = ops::Mean(root_.WithOpName("mean"), x, 0);
  auto max = ops::Max(root_.WithOpName("max"), x, int64_t{1});
  ExpectOk();
  EXPECT_TRUE(Attr<bool>("sum", "keep_dims"));
  EXPECT_FALSE(Attr<bool>("mean", "keep_dims"));
  EXPECT_EQ(Attr<DataType>("sum", "Tidx"), DT_INT32);
  EXPECT_EQ(Attr<DataType>("max", "Tidx"), DT_INT64);
  EXPECT_EQ(Node("max").op(), "Max");
  EXPECT_EQ(sum.output.type(), DT_FLOAT);
  EXPECT_EQ(mean.output.type(), DT_FLOAT);
  EXPECT_EQ(max.output.type(), DT_FLOAT);
}

TEST_F(OpsTest, ArgMaxEqualCast) {
  auto x = ops::Placeholder(root_, DT_FLOAT);
  auto arg = ops::ArgMax(root_.WithOpName("arg"), x, 1);
  auto arg32 = ops::ArgMax(root_.WithOpName("arg32"), x, 1, ops::ArgMax::OutputType(DT_INT32));
  auto eq = ops::Equal(root_.WithOpName("eq"), arg, arg);
  auto cast = ops::Cast(root_.WithOpName("cast"), eq, DT_FLOAT);
  ExpectOk();
  EXPECT_EQ(arg.output.type(), DT_INT64);
  EXPECT_EQ(arg32.output.type(), DT_INT32);
  EXPECT_EQ(eq.z.type(), DT_BOOL);
  EXPECT_EQ(Attr<DataType>("eq", "T"), DT_INT64);
  EXPECT_EQ(Attr<DataType>("cast", "SrcT"), DT_BOOL);
  EXPECT_EQ(Attr<DataType>("cast", "DstT"), DT_FLOAT);
  EXPECT_EQ(cast.y.type(), DT_FLOAT);
}

TEST_F(OpsTest, NeuralNetworkOps) {
  auto x = ops::Placeholder(root_, DT_FLOAT);
  auto labels = ops::Placeholder(root_, DT_INT64);
  auto relu = ops::Relu(root_.WithOpName("relu"), x);
  auto grad = ops::ReluGrad(root_.WithOpName("grad"), x, relu);
  auto bias =
      ops::BiasAdd(root_.WithOpName("bias"), x, {1.f, 2.f}, ops::BiasAdd::DataFormat("NHWC"));
  auto sm = ops::Softmax(root_.WithOpName("sm"), x);
  auto xent = ops::SoftmaxCrossEntropyWithLogits(root_.WithOpName("xent"), x, sm);
  auto sparse = ops::SparseSoftmaxCrossEntropyWithLogits(root_.WithOpName("sparse"), x, labels);
  ExpectOk();
  EXPECT_EQ(relu.activations.type(), DT_FLOAT);
  EXPECT_EQ(grad.backprops.type(), DT_FLOAT);
  EXPECT_EQ(Attr<std::string>("bias", "data_format"), "NHWC");
  EXPECT_EQ(sm.softmax.type(), DT_FLOAT);
  EXPECT_EQ(xent.loss.name(), "xent:0");
  EXPECT_EQ(xent.backprop.name(), "xent:1");
  EXPECT_EQ(xent.backprop.type(), DT_FLOAT);
  EXPECT_EQ(Attr<DataType>("sparse", "Tlabels"), DT_INT64);
  EXPECT_EQ(sparse.loss.type(), DT_FLOAT);
  EXPECT_EQ(sparse.backprop.type(), DT_FLOAT);
}

TEST_F(OpsTest, RandomOps) {
  auto u = ops::RandomUniform(root_.WithOpName("u"), {2, 3}, DT_FLOAT,
                              ops::RandomUniform::Seed(1).Seed2(2));
  auto n = ops::RandomStandardNormal(root_.WithOpName("n"), {2}, DT_DOUBLE);
  auto t = ops::TruncatedNormal(root_.WithOpName("t"), {int64_t{4}}, DT_FLOAT,
                                ops::TruncatedNormal::Seed2(5));
  ExpectOk();
  EXPECT_EQ(Attr<int64_t>("u", "seed"), 1);
  EXPECT_EQ(Attr<int64_t>("u", "seed2"), 2);
  EXPECT_EQ(Attr<DataType>("u", "T"), DT_INT32);
  EXPECT_EQ(u.output.type(), DT_FLOAT);
  EXPECT_EQ(Attr<int64_t>("n", "seed"), 0);
  EXPECT_EQ(n.output.type(), DT_DOUBLE);
  EXPECT_EQ(Attr<int64_t>("t", "seed2"), 5);
  EXPECT_EQ(Attr<DataType>("t", "T"), DT_INT64);
  EXPECT_EQ(t.output.type(), DT_FLOAT);
}

TEST_F(OpsTest, ReferenceVariables) {
  auto v = ops::Variable(root_.WithOpName("v"), {2}, DT_FLOAT,
                         ops::Variable::Container("c").SharedName("shared"));
  auto init = ops::Assign(root_.WithOpName("init"), v, {1.f, 2.f},
                          ops::Assign::ValidateShape(false).UseLocking(false));
  auto add = ops::AssignAdd(root_.WithOpName("add"), v, {1.f, 1.f});
  auto sub =
      ops::AssignSub(root_.WithOpName("sub"), v, {1.f, 1.f}, ops::AssignSub::UseLocking(true));
  auto read = ops::Identity(root_.WithOpName("read"), v);
  ExpectOk();
  EXPECT_EQ(Node("v").op(), "VariableV2");
  EXPECT_EQ(Attr<std::string>("v", "container"), "c");
  EXPECT_EQ(Attr<std::string>("v", "shared_name"), "shared");
  EXPECT_EQ(Attr<PartialTensorShape>("v", "shape").DebugString(), "[2]");
  EXPECT_EQ(v.ref.type(), DT_FLOAT_REF);
  EXPECT_FALSE(Attr<bool>("init", "validate_shape"));
  EXPECT_FALSE(Attr<bool>("init", "use_locking"));
  EXPECT_EQ(init.output_ref.type(), DT_FLOAT_REF);
  EXPECT_FALSE(Attr<bool>("add", "use_locking"));
  EXPECT_TRUE(Attr<bool>("sub", "use_locking"));
  EXPECT_EQ(add.output_ref.type(), DT_FLOAT_REF);
  EXPECT_EQ(sub.output_ref.type(), DT_FLOAT_REF);
  EXPECT_EQ(read.output.type(), DT_FLOAT);
}

TEST_F(OpsTest, AssignToANonVariableIsAnError) {
  auto x = ops::Placeholder(root_, DT_FLOAT);
  ops::Assign(root_.WithOpName("assign"), x, 1.f);
  EXPECT_EQ(root_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(root_.status().message().find("input 'ref' must be a reference"), std::string::npos)
      << root_.status();
}

// Static shapes, as TensorFlow's graph construction infers them: known
// through the ops that have shape functions, and an error at build time (not
// at Run) where they cannot go together.
TEST_F(OpsTest, ShapesAreInferredWhileBuilding) {
  auto x = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape({-1, 3}));
  auto w = ops::Variable(root_.WithOpName("w"), {3, 4}, DT_FLOAT);
  auto y = ops::Relu(root_, ops::MatMul(root_, x, w));
  auto unknown = ops::Placeholder(root_, DT_FLOAT);
  ExpectOk();
  EXPECT_EQ(root_.InferredShape(x).DebugString(), "[?,3]");
  EXPECT_EQ(root_.InferredShape(w).DebugString(), "[3,4]");
  EXPECT_EQ(root_.InferredShape(y).DebugString(), "[?,4]");
  EXPECT_TRUE(root_.InferredShape(unknown).unknown_rank());
  EXPECT_TRUE(root_.InferredShape(Output()).unknown_rank());
  // An Output of another graph says nothing about this one.
  Scope other = Scope::NewRootScope();
  EXPECT_TRUE(other.InferredShape(y).unknown_rank());
}

// Constant inputs (a reshape's shape, a reduction's axes) are read, as
// TensorFlow's shape functions read them.
TEST_F(OpsTest, ConstantShapesAndAxesAreReadWhileBuilding) {
  auto images = ops::Placeholder(root_, DT_FLOAT, ops::Placeholder::Shape({-1, 28, 28}));
  auto flat = ops::Reshape(root_, images, {-1, 784});
  auto w = ops::Variable(root_, {784, 10}, DT_FLOAT);
  auto logits = ops::MatMul(root_, flat, w);
  auto mean = ops::Mean(root_, logits, {1}, ops::Mean::KeepDims(true));
  auto noise = ops::RandomUniform(root_, {2, 5}, DT_FLOAT);
  ExpectOk();
  EXPECT_EQ(root_.InferredShape(flat).DebugString(), "[?,784]");
  EXPECT_EQ(root_.InferredShape(logits).DebugString(), "[?,10]");
  EXPECT_EQ(root_.InferredShape(mean).DebugString(), "[?,1]");
  EXPECT_EQ(root_.InferredShape(noise).DebugString(), "[2,5]");
  // A shape fed at Run is not known: only the rank.
  auto shape = ops::Placeholder(root_, DT_INT32, ops::Placeholder::Shape({2}));
  EXPECT_EQ(root_.InferredShape(ops::Reshape(root_, images, shape)).DebugString(), "[?,?]");
  ops::Reshape(root_.WithOpName("bad"), ops::Const(root_, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}), {4});
  EXPECT_STATUS(root_.status(), kInvalidArgument,
                "node 'bad' (Reshape): cannot reshape a tensor of 6 elements ([6]) into [4]");
}

TEST_F(OpsTest, MatMulOfMismatchedShapesFailsAtBuild) {
  auto a = ops::Placeholder(root_, DT_FLOAT, ops::Placeholder::Shape({2, 3}));
  auto b = ops::Placeholder(root_, DT_FLOAT, ops::Placeholder::Shape({4, 5}));
  ops::MatMul(root_.WithOpName("mm"), a, b);
  EXPECT_STATUS(root_.status(), kInvalidArgument,
                "node 'mm' (MatMul): inner dimensions differ: [2,3] x [4,5]");
}

TEST_F(OpsTest, AssignValidatesTheVariablesShapeAtBuild) {
  auto v = ops::Variable(root_.WithOpName("v"), {2}, DT_FLOAT);
  auto ok = ops::Assign(root_, v, {1.f, 2.f});
  ExpectOk();
  EXPECT_EQ(root_.InferredShape(ok).DebugString(), "[2]");
  // validate_shape=false lets the variable take another shape.
  auto reshaped = ops::Assign(root_, v, {1.f, 2.f, 3.f}, ops::Assign::ValidateShape(false));
  ExpectOk();
  EXPECT_EQ(root_.InferredShape(reshaped).DebugString(), "[3]");
  ops::Assign(root_.WithOpName("bad"), v, {1.f, 2.f, 3.f});
  EXPECT_STATUS(root_.status(), kInvalidArgument,
                "node 'bad' (Assign): cannot assign a value of shape [3] to a variable of shape "
                "[2] (validate_shape=false allows it)");
}

TEST_F(OpsTest, NegativeDimensionsFailAtBuild) {
  ops::Placeholder(root_.WithOpName("p"), DT_FLOAT, ops::Placeholder::Shape({2, -5}));
  EXPECT_STATUS(root_.status(), kInvalidArgument, "node 'p'");
  EXPECT_STATUS(root_.status(), kInvalidArgument, "dimension -5");
  Scope root = Scope::NewRootScope();
  ops::Variable(root.WithOpName("v"), {-2}, DT_FLOAT);
  EXPECT_STATUS(root.status(), kInvalidArgument, "dimension -2");
  // Every shape attr, whatever the op's shape function reads.
  Scope other = Scope::NewRootScope();
  ops::VarHandleOp(other.WithOpName("h"), DT_FLOAT, {3, -4});
  EXPECT_STATUS(other.status(), kInvalidArgument,
                "attr 'shape' of node 'h' (VarHandleOp) is invalid: shape has dimension -4");
}

TEST_F(OpsTest, ResourceVariables) {
  auto h = ops::VarHandleOp(root_.WithOpName("h"), DT_FLOAT, {2},
                            ops::VarHandleOp::SharedName("weights"));
  auto set = ops::AssignVariableOp(root_.WithOpName("set"), h, {1.f, 2.f});
  auto add = ops::AssignAddVariableOp(root_.WithOpName("add"), h, {1.f, 1.f});
  auto sub = ops::AssignSubVariableOp(root_.WithOpName("sub"), h, {1.f, 1.f});
  auto read =
      ops::ReadVariableOp(root_.WithControlDependencies({set}).WithOpName("read"), h, DT_FLOAT);
  ExpectOk();
  EXPECT_EQ(h.resource.type(), DT_RESOURCE);
  EXPECT_EQ(Attr<std::string>("h", "shared_name"), "weights");
  EXPECT_EQ(Attr<DataType>("set", "dtype"), DT_FLOAT);
  EXPECT_EQ(set.operation.num_outputs(), 0);
  EXPECT_EQ(Attr<DataType>("add", "dtype"), DT_FLOAT);
  EXPECT_EQ(Attr<DataType>("sub", "dtype"), DT_FLOAT);
  EXPECT_EQ(read.value.type(), DT_FLOAT);
  EXPECT_EQ(Inputs("read"), (std::vector<std::string>{"h", "^set"}));
}

TEST_F(OpsTest, WrappersConvertToInputsOfOtherWrappers) {
  auto x = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT);
  auto w = ops::Variable(root_.WithOpName("w"), {2, 2}, DT_FLOAT);
  auto y = ops::Relu(root_.WithOpName("y"), ops::Add(root_, ops::MatMul(root_, x, w), 1.f));
  ExpectOk();
  EXPECT_EQ(Inputs("MatMul"), (std::vector<std::string>{"x", "w"}));
  EXPECT_EQ(Inputs("y"), std::vector<std::string>{"Add"});
  EXPECT_EQ(y.activations.type(), DT_FLOAT);
}

TEST_F(OpsTest, OpsThatGradientsBuild) {
  auto x = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT);
  auto args = ops::BroadcastGradientArgs(root_.WithOpName("args"), {2, 3}, {3});
  auto offsets = ops::ConcatOffset(root_.WithOpName("offsets"), 1, {{2, 3}, {2, 4}, {2, 1}});
  auto stitched = ops::DynamicStitch(root_.WithOpName("stitch"), {{0, 1}, {1}}, {{4, 5}, {1}});
  auto sum = ops::AddN(root_.WithOpName("sum"), {x, x, x});
  auto slice = ops::Slice(root_.WithOpName("slice"), x, {0, 1}, {-1, 2});
  auto size = ops::Size(root_.WithOpName("size"), x, ops::Size::OutType(DT_INT64));
  auto bias = ops::BiasAddGrad(root_.WithOpName("bias"), x, ops::BiasAddGrad::DataFormat("NCHW"));
  ExpectOk();
  EXPECT_EQ(args.r0.type(), DT_INT32);
  EXPECT_EQ(args.r1.index(), 1);
  ASSERT_EQ(offsets.offset.size(), 3u);
  EXPECT_EQ(offsets.offset[2].name(), "offsets:2");
  EXPECT_EQ(Attr<int64_t>("offsets", "N"), 3);
  EXPECT_EQ(Attr<int64_t>("stitch", "N"), 2);
  EXPECT_EQ(stitched.merged.type(), DT_INT32);
  EXPECT_EQ(Attr<int64_t>("sum", "N"), 3);
  EXPECT_EQ(Attr<DataType>("slice", "Index"), DT_INT32);
  EXPECT_EQ(size.output.type(), DT_INT64);
  EXPECT_EQ(Attr<std::string>("bias", "data_format"), "NCHW");
  EXPECT_EQ(ops::SigmoidGrad(root_, x, x).z.type(), DT_FLOAT);
  EXPECT_EQ(ops::Range(root_, 0, 5, 1).output.type(), DT_INT32);
}

}  // namespace
}  // namespace tensorgrid
