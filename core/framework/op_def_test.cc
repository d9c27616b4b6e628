#include "core/framework/op_def.h"

#include "core/framework/attr_value_util.h"
#include "core/framework/device.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

OpDef MustFinalize(const OpDefBuilder& b) {
  auto op = b.Finalize();
  EXPECT_TRUE(op.ok()) << op.status();
  return *op;
}

TEST(OpDefBuilderTest, ParsesArgsAndAttrs) {
  OpDef op = MustFinalize(OpDefBuilder("Test")
                              .Input("a: T")
                              .Input("b: N * int32")
                              .Input("r: Ref(T)")
                              .Output("out: float")
                              .Attr("T: {float, double}")
                              .Attr("N: int >= 1")
                              .Attr("flag: bool = false")
                              .Attr("name: string = 'x'")
                              .Attr("dims: list(int) = [1, 2]"));
  ASSERT_EQ(op.inputs.size(), 3u);
  EXPECT_EQ(op.inputs[0].type_attr, "T");
  EXPECT_EQ(op.inputs[1].number_attr, "N");
  EXPECT_EQ(op.inputs[1].type, DT_INT32);
  EXPECT_TRUE(op.inputs[2].is_ref);
  EXPECT_EQ(op.outputs[0].type, DT_FLOAT);
  const AttrDef* n = op.FindAttr("N");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(*n->minimum, 1);
  EXPECT_EQ(op.FindAttr("T")->allowed_types.size(), 2u);
  EXPECT_EQ(op.FindAttr("name")->default_value->s(), "x");
  EXPECT_EQ(op.FindAttr("dims")->default_value->list().i_size(), 2);
}

TEST(OpDefBuilderTest, TypeListsWithAllowedTypesAndMinimum) {
  OpDef op = MustFinalize(OpDefBuilder("Parse")
                              .Input("defaults: Tdense")
                              .Attr("Tdense: list({float, int64, string}) >= 1"));
  const AttrDef* t = op.FindAttr("Tdense");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, "list(type)");
  EXPECT_EQ(t->allowed_types, (std::vector<DataType>{DT_FLOAT, DT_INT64, DT_STRING}));
  EXPECT_EQ(op.inputs[0].type_list_attr, "Tdense");

  NodeDef node;
  node.set_name("p");
  node.set_op("Parse");
  node.add_input("a");
  SetAttr(&node, "Tdense", std::vector<DataType>{DT_FLOAT});
  ASSERT_OK(ValidateNodeDef(op, &node));
  SetAttr(&node, "Tdense", std::vector<DataType>{DT_INT32});
  EXPECT_STATUS(ValidateNodeDef(op, &node), kInvalidArgument,
                "is int32, not one of the allowed types {float, int64, string}");
  node.clear_input();
  SetAttr(&node, "Tdense", std::vector<DataType>{});
  EXPECT_STATUS(ValidateNodeDef(op, &node), kInvalidArgument, "is 0, less than the minimum 1");
  EXPECT_FALSE(OpDefBuilder("Bad").Attr("T: list({float, 'x'})").Finalize().ok());
}

TEST(OpDefBuilderTest, AttrsCountingAnArgumentsTensorsAreAtLeastOneAsInTensorFlow) {
  OpDef op = MustFinalize(OpDefBuilder("Counted")
                              .Input("a: N * float")
                              .Output("b: Tout")
                              .Input("c: M * float")
                              .Attr("N: int")
                              .Attr("Tout: list(type)")
                              .Attr("M: int >= 0")
                              .Attr("other: int"));
  EXPECT_EQ(op.FindAttr("N")->minimum, 1);
  EXPECT_EQ(op.FindAttr("Tout")->minimum, 1);
  EXPECT_EQ(op.FindAttr("M")->minimum, 0);  // as its spec says
  EXPECT_FALSE(op.FindAttr("other")->minimum.has_value());
}

TEST(OpDefToProtoTest, TensorFlowsOpDefWithOrWithoutDocs) {
  OpDef op = MustFinalize(OpDefBuilder("P")
                              .Input("x: T")
                              .Input("r: Ref(float)")
                              .Output("y: N * T")
                              .Attr("T: {float, int64}")
                              .Attr("N: int")
                              .Attr("mode: {'a', 'b'} = 'a'")
                              .SetIsStateful()
                              .Doc("Sums.\n\nx: the input."));
  const OpDefProto stripped = OpDefToProto(op, /*docs=*/false);
  EXPECT_EQ(
      stripped.ShortDebugString(),
      "name: \"P\" input_arg { name: \"x\" type_attr: \"T\" } input_arg { name: \"r\" "
      "type: DT_FLOAT is_ref: true } output_arg { name: \"y\" type_attr: \"T\" number_attr: "
      "\"N\" } attr { name: \"T\" type: \"type\" allowed_values { list { type: DT_FLOAT type: "
      "DT_INT64 } } } attr { name: \"N\" type: \"int\" has_minimum: true minimum: 1 } attr { "
      "name: \"mode\" type: \"string\" default_value { s: \"a\" } allowed_values { list { s: "
      "\"a\" s: \"b\" } } } is_stateful: true");
  const OpDefProto documented = OpDefToProto(op, /*docs=*/true);
  EXPECT_EQ(documented.summary(), "Sums.");
  EXPECT_EQ(documented.input_arg(0).description(), "the input.");
}

TEST(OpDefBuilderTest, DocSplitsSummaryDescriptionAndArgs) {
  OpDef op = MustFinalize(
      OpDefBuilder("Doc").Input("x: float").Output("y: float").Attr("scale: float = 1").Doc(R"doc(
y = scale * x, element-wise,
for any shape.

Note: the description keeps its line breaks
  and indentation.

x: The input.
scale: What x is multiplied by;
  a continuation line.
y: The output.
)doc"));
  EXPECT_EQ(op.summary, "y = scale * x, element-wise,\nfor any shape.");
  EXPECT_EQ(op.description, "Note: the description keeps its line breaks\n  and indentation.");
  EXPECT_EQ(op.inputs[0].description, "The input.");
  EXPECT_EQ(op.outputs[0].description, "The output.");
  EXPECT_EQ(op.FindAttr("scale")->description, "What x is multiplied by; a continuation line.");
}

TEST(OpDefBuilderTest, RejectsMalformedSpecs) {
  EXPECT_STATUS(OpDefBuilder("Bad").Input("a: Q").Finalize().status(), kInvalidArgument,
                "unknown type or attr 'Q'");
  EXPECT_STATUS(OpDefBuilder("Bad").Attr("x: bool = maybe").Finalize().status(), kInvalidArgument,
                "maybe");
  EXPECT_STATUS(OpDefBuilder("Bad").Input("nocolon").Finalize().status(), kInvalidArgument,
                "malformed spec");
}

class ValidateNodeDefTest : public ::testing::Test {
 protected:
  OpDef op_ = MustFinalize(OpDefBuilder("V")
                               .Input("x: N * T")
                               .Output("y: T")
                               .Attr("T: {float, int32}")
                               .Attr("N: int >= 2")
                               .Attr("keep: bool = true"));
  NodeDef Node(int inputs) {
    NodeDef n;
    n.set_name("v");
    n.set_op("V");
    for (int i = 0; i < inputs; ++i) n.add_input("a");
    return n;
  }
};

TEST_F(ValidateNodeDefTest, FillsDefaultsAndComputesTypes) {
  NodeDef n = Node(2);
  SetAttr(&n, "T", DT_INT32);
  SetAttr(&n, "N", 2);
  ASSERT_OK(ValidateNodeDef(op_, &n));
  EXPECT_TRUE(n.attr().at("keep").b());
  std::vector<DataType> in, out;
  ASSERT_OK(InOutTypesForNode(n, op_, &in, &out));
  EXPECT_EQ(in, (std::vector<DataType>{DT_INT32, DT_INT32}));
  EXPECT_EQ(out, (std::vector<DataType>{DT_INT32}));
}

TEST_F(ValidateNodeDefTest, NamesNodeAndAttrOnMismatch) {
  NodeDef missing = Node(2);
  SetAttr(&missing, "N", 2);
  EXPECT_STATUS(ValidateNodeDef(op_, &missing), kInvalidArgument, "'v' (V) is missing attr 'T'");

  NodeDef wrong_type = Node(2);
  SetAttr(&wrong_type, "T", DT_DOUBLE);
  SetAttr(&wrong_type, "N", 2);
  EXPECT_STATUS(ValidateNodeDef(op_, &wrong_type), kInvalidArgument,
                "not one of the allowed types");

  NodeDef wrong_kind = Node(2);
  SetAttr(&wrong_kind, "T", DT_FLOAT);
  SetAttr(&wrong_kind, "N", "two");
  EXPECT_STATUS(ValidateNodeDef(op_, &wrong_kind), kInvalidArgument, "attr 'N' of node 'v'");

  NodeDef too_small = Node(1);
  SetAttr(&too_small, "T", DT_FLOAT);
  SetAttr(&too_small, "N", 1);
  EXPECT_STATUS(ValidateNodeDef(op_, &too_small), kInvalidArgument, "less than the minimum 2");

  NodeDef extra = Node(2);
  SetAttr(&extra, "T", DT_FLOAT);
  SetAttr(&extra, "N", 2);
  SetAttr(&extra, "bogus", 1);
  EXPECT_STATUS(ValidateNodeDef(op_, &extra), kInvalidArgument, "'bogus'");

  // Checked before anything is sized by it (and before it is cut to an int).
  NodeDef huge = Node(2);
  SetAttr(&huge, "T", DT_FLOAT);
  SetAttr(&huge, "N", int64_t{1} << 32);
  EXPECT_STATUS(ValidateNodeDef(op_, &huge), kInvalidArgument,
                "attr 'N' of node 'v' (V) is 4294967296; an argument stands for 0 to 1048576");
  std::vector<DataType> in, out;
  EXPECT_STATUS(InOutTypesForNode(huge, op_, &in, &out), kInvalidArgument, "0 to 1048576");
  SetAttr(&huge, "N", -1);
  EXPECT_STATUS(InOutTypesForNode(huge, op_, &in, &out), kInvalidArgument, "is -1; an argument");

  NodeDef inputs = Node(3);
  SetAttr(&inputs, "T", DT_FLOAT);
  SetAttr(&inputs, "N", 2);
  EXPECT_STATUS(ValidateNodeDef(op_, &inputs), kInvalidArgument, "has 3 data inputs");
}

TEST(KernelRegistryTest, MissingKernelIsUnimplementedNamingOpAndNode) {
  static OpRegistrar reg(OpDefBuilder("KernelLessOpForTest").Attr("T: type"));
  auto device = NewCpuDevice("/job:localhost/replica:0/task:0/device:CPU:0", 1);
  NodeDef n;
  n.set_name("lonely");
  n.set_op("KernelLessOpForTest");
  SetAttr(&n, "T", DT_FLOAT);
  const OpDef* op = OpRegistry::Global()->Find("KernelLessOpForTest");
  ASSERT_NE(op, nullptr);
  EXPECT_STATUS(KernelRegistry::Global()->CreateKernel(device.get(), n, *op).status(),
                kUnimplemented,
                "no CPU kernel for op 'KernelLessOpForTest' (node 'lonely', T=float)");
}

}  // namespace
}  // namespace tensorgrid
