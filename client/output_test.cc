#include "client/output.h"

#include <string>
#include <unordered_set>

#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

Tensor TensorOf(const Input& input) {
  EXPECT_TRUE(input.status().ok()) << input.status();
  EXPECT_TRUE(input.is_constant());
  return input.tensor();
}

TEST(InputTest, ScalarLiteralsKeepTheirDtype) {
  EXPECT_EQ(TensorOf(1.5f).dtype(), DT_FLOAT);
  EXPECT_EQ(TensorOf(1.5).dtype(), DT_DOUBLE);
  EXPECT_EQ(TensorOf(7).dtype(), DT_INT32);
  EXPECT_EQ(TensorOf(int64_t{7}).dtype(), DT_INT64);
  EXPECT_EQ(TensorOf(7LL).dtype(), DT_INT64);
  EXPECT_EQ(TensorOf(true).dtype(), DT_BOOL);
  EXPECT_EQ(TensorOf(uint8_t{3}).dtype(), DT_UINT8);
  Tensor s = TensorOf(std::string("hi"));
  EXPECT_EQ(s.dtype(), DT_STRING);
  EXPECT_EQ(s.scalar<std::string>(), "hi");
  EXPECT_EQ(TensorOf("lit").scalar<std::string>(), "lit");
  Tensor f = TensorOf(2.5f);
  EXPECT_EQ(f.dims(), 0);
  EXPECT_EQ(f.scalar<float>(), 2.5f);
}

TEST(InputTest, FlatListIsAVector) {
  Tensor t = TensorOf({1, 2, 3});
  EXPECT_EQ(t.dtype(), DT_INT32);
  EXPECT_EQ(t.shape(), TensorShape({3}));
  EXPECT_EQ(t.data<int32_t>()[2], 3);
  Tensor s = TensorOf({"a", "bc"});
  EXPECT_EQ(s.dtype(), DT_STRING);
  EXPECT_EQ(s.data<std::string>()[1], "bc");
}

TEST(InputTest, NestedListsStack) {
  Tensor t = TensorOf({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  EXPECT_EQ(t.dtype(), DT_FLOAT);
  EXPECT_EQ(t.shape(), TensorShape({2, 3}));
  EXPECT_EQ(t.data<float>()[4], 5.f);
  Tensor column = TensorOf({{-1.f}, {2.f}});
  EXPECT_EQ(column.shape(), TensorShape({2, 1}));
  Tensor row = TensorOf({{3.f, 2.f}});
  EXPECT_EQ(row.shape(), TensorShape({1, 2}));
  Tensor cube = TensorOf({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}});
  EXPECT_EQ(cube.shape(), TensorShape({2, 2, 2}));
  EXPECT_EQ(cube.data<int32_t>()[7], 8);
  Tensor words = TensorOf({{"a", "b"}, {"c", "d"}});
  EXPECT_EQ(words.data<std::string>()[3], "d");
}

TEST(InputTest, RaggedOrMixedNestingIsAnError) {
  Input ragged = {{1.f, 2.f}, {3.f}};
  EXPECT_EQ(ragged.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ragged.status().message().find("ragged"), std::string::npos);
  Input mixed = {{1.f, 2.f}, {3, 4}};
  EXPECT_EQ(mixed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(mixed.status().message().find("mixes float and int32"), std::string::npos);
}

TEST(InputTest, ShapedInitializers) {
  Tensor filled = TensorOf(Input::Initializer(0.5f, TensorShape({2, 3})));
  EXPECT_EQ(filled.shape(), TensorShape({2, 3}));
  EXPECT_EQ(filled.data<float>()[5], 0.5f);
  Tensor reshaped = TensorOf(Input::Initializer({1, 2, 3, 4}, TensorShape({2, 2})));
  EXPECT_EQ(reshaped.shape(), TensorShape({2, 2}));
  Input wrong = Input::Initializer({1, 2, 3}, TensorShape({2, 2}));
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("needs 4 values, got 3"), std::string::npos);
}

TEST(InputTest, TensorAndOutputInputs) {
  Tensor t(DT_INT64, TensorShape({2}));
  Input from_tensor = t;
  EXPECT_TRUE(from_tensor.tensor().SharesBufferWith(t));

  Operation op("a", {DT_FLOAT});
  Input from_output = Output(op);
  EXPECT_FALSE(from_output.is_constant());
  EXPECT_EQ(from_output.output().name(), "a:0");
  EXPECT_EQ(from_output.output().type(), DT_FLOAT);

  Input by_name("imported", 1, DT_INT32);
  EXPECT_EQ(by_name.node_name(), "imported");
  EXPECT_EQ(by_name.index(), 1);
  EXPECT_EQ(by_name.data_type(), DT_INT32);
}

TEST(OutputTest, SingleOutputConversionAndNames) {
  Operation one("m", {DT_FLOAT});
  Output out = one;
  EXPECT_TRUE(out.valid());
  EXPECT_EQ(out.index(), 0);
  EXPECT_EQ(out.name(), "m:0");

  Operation two("xent", {DT_FLOAT, DT_FLOAT});
  Output ambiguous = two;
  EXPECT_FALSE(ambiguous.valid());
  EXPECT_EQ(ambiguous.index(), Output::kNotSingleOutput);
  EXPECT_EQ(two.output(1).name(), "xent:1");
  EXPECT_FALSE(two.output(2).valid());
  EXPECT_EQ(two.output_type(2), DT_INVALID);

  EXPECT_FALSE(Output().valid());
  EXPECT_FALSE(Operation().valid());
}

TEST(OutputTest, HashAndEquality) {
  Operation two("xent", {DT_FLOAT, DT_FLOAT});
  std::unordered_set<Output, OutputHash> set = {two.output(0), two.output(1), two.output(0)};
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(two.output(0), Output(two, 0));
  EXPECT_NE(two.output(0), two.output(1));
}

TEST(InputListTest, MixesOutputsAndLiterals) {
  Operation a("a", {DT_FLOAT});
  InputList list = {Output(a), 1.f, {2.f, 3.f}};
  ASSERT_EQ(list.size(), 3u);
  EXPECT_FALSE(list.inputs()[0].is_constant());
  EXPECT_EQ(list.inputs()[2].tensor().shape(), TensorShape({2}));
  InputList from_vector = std::vector<Output>{Output(a), Output(a)};
  EXPECT_EQ(from_vector.size(), 2u);
}

}  // namespace
}  // namespace tensorgrid
