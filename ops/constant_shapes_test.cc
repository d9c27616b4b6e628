// Shape functions that read constant inputs (shapes, axes, permutations,
// paddings, begin and size): exact shapes when the values are known at
// build, TensorFlow's errors for values that cannot fit, and the rank-only
// answer when they are not known.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/shape_fn_testutil.h"

namespace tensorgrid {
namespace {

std::optional<Tensor> Ints(std::vector<int32_t> v, TensorShape shape) {
  return Tensor::FromVector<int32_t>(v, shape);
}
std::optional<Tensor> Vec(std::vector<int32_t> v) {
  return Ints(v, TensorShape({static_cast<int64_t>(v.size())}));
}
std::optional<Tensor> Scalar(int32_t v) { return Tensor::Scalar<int32_t>(v); }
const std::optional<Tensor> kUnknown;

NodeDefBuilder Op(const std::string& op) {
  NodeDefBuilder b("n", op);
  b.Attr("T", DT_FLOAT);
  return b;
}

TEST(ConstantShapeTest, ReshapeWorksOutItsMinusOneAndRefusesSizesThatCannotMatch) {
  ShapeFnRun r = RunShapeFn(Op("Reshape"), {{-1, 28, 28}, {2}}, {kUnknown, Vec({-1, 784})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[?,784]");
  r = RunShapeFn(Op("Reshape"), {{6, 4}, {3}}, {kUnknown, Vec({2, -1, 3})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[2,4,3]");
  r = RunShapeFn(Op("Reshape"), {{0, 4}, {2}}, {kUnknown, Vec({0, -1})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[0,?]");  // any size times 0 is 0
  EXPECT_STATUS(RunShapeFn(Op("Reshape"), {{2, 3}, {1}}, {kUnknown, Vec({4})}).status,
                kInvalidArgument,
                "node 'n' (Reshape): cannot reshape a tensor of 6 elements ([2,3]) into [4]");
  EXPECT_STATUS(RunShapeFn(Op("Reshape"), {{2, 3}, {2}}, {kUnknown, Vec({4, -1})}).status,
                kInvalidArgument, "cannot reshape a tensor of 6 elements ([2,3]) into [4,-1]");
  EXPECT_STATUS(RunShapeFn(Op("Reshape"), {{2, 3}, {2}}, {kUnknown, Vec({-1, -1})}).status,
                kInvalidArgument, "may have one -1 and no other negative dimension");
  EXPECT_STATUS(RunShapeFn(Op("Reshape"), {{0}, {2}},
                           {kUnknown, Tensor::FromVector<int64_t>(
                                          {int64_t{1} << 32, int64_t{1} << 32}, TensorShape({2}))})
                    .status,
                kInvalidArgument, "the shape [4294967296,4294967296] has too many elements");
  // Without the values: the rank only.
  r = RunShapeFn(Op("Reshape"), {{2, 3}, {2}});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[?,?]");
}

TEST(ConstantShapeTest, FillAndRandomOpsTakeTheShapeTheyAreGiven) {
  NodeDefBuilder fill("n", "Fill");
  fill.Attr("T", DT_FLOAT);
  ShapeFnRun r = RunShapeFn(fill, {{3}, {}}, {Vec({2, -1, 5})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[2,?,5]");
  EXPECT_STATUS(RunShapeFn(fill, {{2}, {}}, {Vec({2, -3})}).status, kInvalidArgument,
                "node 'n' (Fill): the shape [2,-3] has a negative dimension");
  NodeDefBuilder random("n", "RandomUniform");
  random.Attr("dtype", DT_FLOAT).Attr("T", DT_INT32);
  r = RunShapeFn(random, {{2}}, {Vec({784, 500})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[784,500]");
}

TEST(ConstantShapeTest, TransposeConcatSliceAndPad) {
  ShapeFnRun r = RunShapeFn(Op("Transpose"), {{2, -1, 5}, {3}}, {kUnknown, Vec({2, 0, 1})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[5,2,?]");
  EXPECT_STATUS(RunShapeFn(Op("Transpose"), {{2, 3}, {2}}, {kUnknown, Vec({0, 0})}).status,
                kInvalidArgument, "node 'n' (Transpose): perm [0,0] is not a permutation");

  NodeDefBuilder concat("n", "ConcatV2");
  concat.Attr("T", DT_FLOAT).Attr("N", 2);
  r = RunShapeFn(concat, {{2, 3}, {-1, 4}, {}}, {kUnknown, kUnknown, Scalar(-1)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[2,7]");
  EXPECT_STATUS(RunShapeFn(concat, {{2, 3}, {5, 4}, {}}, {kUnknown, kUnknown, Scalar(1)}).status,
                kInvalidArgument, "node 'n' (ConcatV2): ConcatV2 input 1 has shape [5,4]");
  EXPECT_STATUS(RunShapeFn(concat, {{2, 3}, {2, 4}, {}}, {kUnknown, kUnknown, Scalar(2)}).status,
                kInvalidArgument, "axis 2 is out of range [-2, 2)");
  EXPECT_STATUS(RunShapeFn(concat, {{2, 3}, {2}, {}}, {kUnknown, kUnknown, Scalar(0)}).status,
                kInvalidArgument, "ConcatV2 input 1 has shape [2] of rank 1, not 2 as the others");

  NodeDefBuilder slice("n", "Slice");
  slice.Attr("T", DT_FLOAT).Attr("Index", DT_INT32);
  r = RunShapeFn(slice, {{4, 6}, {2}, {2}}, {kUnknown, Vec({1, 2}), Vec({2, -1})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[2,4]");
  EXPECT_STATUS(RunShapeFn(slice, {{4, 6}, {2}, {2}}, {kUnknown, Vec({3, 0}), Vec({2, 1})}).status,
                kInvalidArgument, "slice size 2 at begin 3 does not fit dimension 0 of [4,6]");

  r = RunShapeFn(Op("Pad"), {{2, -1}, {2, 2}}, {kUnknown, Ints({1, 1, 0, 3}, TensorShape({2, 2}))});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[4,?]");
}

TEST(ConstantShapeTest, ReductionsAndArgMaxDropTheirAxes) {
  NodeDefBuilder sum("n", "Sum");
  sum.Attr("T", DT_FLOAT).Attr("keep_dims", false);
  ShapeFnRun r = RunShapeFn(sum, {{8, 7, 7, 32}, {2}}, {kUnknown, Vec({1, 2})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[8,32]");
  NodeDefBuilder mean("n", "Mean");
  mean.Attr("T", DT_FLOAT).Attr("keep_dims", true);
  r = RunShapeFn(mean, {{-1, 10}, {}}, {kUnknown, Scalar(-1)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[?,1]");
  EXPECT_STATUS(RunShapeFn(sum, {{2, 3}, {}}, {kUnknown, Scalar(2)}).status, kInvalidArgument,
                "node 'n' (Sum): axis 2 is out of range [-2, 2) for an input of rank 2");
  NodeDefBuilder argmax("n", "ArgMax");
  argmax.Attr("T", DT_FLOAT);
  r = RunShapeFn(argmax, {{-1, 10}, {}}, {kUnknown, Scalar(1)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[?]");
}

TEST(ConstantShapeTest, RangeOfConstantsHasItsLength) {
  NodeDefBuilder range("n", "Range");
  range.Attr("Tidx", DT_INT32);
  ShapeFnRun r = RunShapeFn(range, {{}, {}, {}}, {Scalar(0), Scalar(10), Scalar(3)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[4]");  // 0, 3, 6, 9
  r = RunShapeFn(range, {{}, {}, {}}, {Scalar(5), Scalar(-1), Scalar(-2)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[3]");  // 5, 3, 1
  r = RunShapeFn(range, {{}, {}, {}}, {Scalar(2), Scalar(2), Scalar(1)});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[0]");
  r = RunShapeFn(range, {{}, {}, {}});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[?]");
  EXPECT_STATUS(RunShapeFn(range, {{}, {}, {}}, {Scalar(0), Scalar(5), Scalar(0)}).status,
                kInvalidArgument, "node 'n' (Range): Requires delta != 0");
  EXPECT_STATUS(RunShapeFn(range, {{}, {}, {}}, {Scalar(5), Scalar(0), Scalar(1)}).status,
                kInvalidArgument, "Requires start <= limit when delta > 0: 5/0");
}

TEST(InferenceConstantTest, OnlySmallIntegerConsts) {
  auto node = [](const Tensor& value) {
    NodeDef n;
    n.set_name("c");
    n.set_op("Const");
    SetAttr(&n, "value", value);
    SetAttr(&n, "dtype", value.dtype());
    return n;
  };
  const std::optional<Tensor> shape = InferenceConstant(node(*Vec({-1, 784})), 0);
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(shape->NumElements(), 2);
  EXPECT_FALSE(InferenceConstant(node(*Vec({1})), 1).has_value());  // no output 1
  EXPECT_FALSE(InferenceConstant(node(Tensor::Scalar<float>(1.f)), 0).has_value());
  EXPECT_FALSE(InferenceConstant(node(Tensor(DT_INT32, TensorShape({2000}))), 0).has_value());
  NodeDef placeholder = node(*Vec({1}));
  placeholder.set_op("Placeholder");
  EXPECT_FALSE(InferenceConstant(placeholder, 0).has_value());
}

}  // namespace
}  // namespace tensorgrid
