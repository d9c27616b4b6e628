#include "kernels/math/broadcast.h"

#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

using math::BinaryBroadcast;
using Dims = BinaryBroadcast::Dims;

TEST(BinaryBroadcastTest, TrailingVectorMergesLeadingDims) {
  auto b = BinaryBroadcast::Make(TensorShape({2, 3, 4}), TensorShape({4}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->output_shape(), TensorShape({2, 3, 4}));
  EXPECT_EQ(b->dims(), Dims({6, 4}));
  EXPECT_EQ(b->x_strides(), Dims({4, 1}));
  EXPECT_EQ(b->y_strides(), Dims({0, 1}));
}

TEST(BinaryBroadcastTest, BothSidesBroadcast) {
  auto b = BinaryBroadcast::Make(TensorShape({8, 1, 5}), TensorShape({1, 7, 5}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->output_shape(), TensorShape({8, 7, 5}));
  EXPECT_EQ(b->dims(), Dims({8, 7, 5}));
  EXPECT_EQ(b->x_strides(), Dims({5, 0, 1}));
  EXPECT_EQ(b->y_strides(), Dims({0, 5, 1}));
}

TEST(BinaryBroadcastTest, ColumnTimesRow) {
  auto b = BinaryBroadcast::Make(TensorShape({2, 1}), TensorShape({1, 3}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->output_shape(), TensorShape({2, 3}));
  EXPECT_EQ(b->dims(), Dims({2, 3}));
  EXPECT_EQ(b->x_strides(), Dims({1, 0}));
  EXPECT_EQ(b->y_strides(), Dims({0, 1}));
}

TEST(BinaryBroadcastTest, SizeOneDimsDropOut) {
  auto b = BinaryBroadcast::Make(TensorShape({1, 4, 1}), TensorShape({3, 1, 1, 1}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->output_shape(), TensorShape({3, 1, 4, 1}));
  EXPECT_EQ(b->dims(), Dims({3, 4}));
  EXPECT_EQ(b->x_strides(), Dims({0, 1}));
  EXPECT_EQ(b->y_strides(), Dims({1, 0}));
}

TEST(BinaryBroadcastTest, OneElementEachGivesNoLoop) {
  auto b = BinaryBroadcast::Make(TensorShape({1}), TensorShape({1, 1}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->output_shape(), TensorShape({1, 1}));
  EXPECT_TRUE(b->dims().empty());
}

TEST(BinaryBroadcastTest, ZeroSizedDimensionBroadcastsAgainstOne) {
  auto b = BinaryBroadcast::Make(TensorShape({0, 3}), TensorShape({1, 3}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->output_shape(), TensorShape({0, 3}));
}

TEST(BinaryBroadcastTest, IncompatibleShapesNameBoth) {
  auto b = BinaryBroadcast::Make(TensorShape({2, 3}), TensorShape({4}));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(b.status().message(), "Incompatible shapes: [2,3] vs. [4]");
}

}  // namespace
}  // namespace tensorgrid
