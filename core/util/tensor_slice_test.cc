// Slice specs, TensorFlow's slice keys and slice copies.
#include "core/util/tensor_slice.h"

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace checkpoint {
namespace {

TEST(TensorSliceTest, ParsesShapeAndSlice) {
  auto s = ParseShapeAndSlice("4 4 0,2:-");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->full_shape, TensorShape({4, 4}));
  EXPECT_EQ(s->slice_shape, TensorShape({2, 4}));
  EXPECT_EQ(s->slice.DebugString(), "0,2:-");
  EXPECT_FALSE(s->slice.IsFull());
  EXPECT_TRUE(TensorSlice::Parse("-:-")->IsFull());
  EXPECT_STATUS(ParseShapeAndSlice("4 4").status(), kInvalidArgument, "extent '4'");
  EXPECT_STATUS(ParseShapeAndSlice("4").status(), kInvalidArgument, "needs the dimensions");
  EXPECT_STATUS(ParseShapeAndSlice("4 x -").status(), kInvalidArgument, "'x' is not a number");
  EXPECT_STATUS(ParseShapeAndSlice("4 3,2").status(), kInvalidArgument, "runs past dimension 0");
  EXPECT_STATUS(ParseShapeAndSlice("4 4 -").status(), kInvalidArgument, "1 extents");
  EXPECT_STATUS(ParseShapeAndSlice("4 -1,2").status(), kInvalidArgument, "start >= 0");
}

TEST(TensorSliceTest, KeysAreTensorFlowsOrderedCode) {
  // 0, "w" (then the 0 1 separator), rank 2, then start/length pairs as
  // signed ordered code: 0 -> 0x80, 2 -> 0x82, -1 -> 0x7f.
  EXPECT_EQ(EncodeTensorNameSlice("w", *TensorSlice::Parse("0,2:-")),
            std::string("\x00w\x00\x01\x01\x02\x80\x82\x80\x7f", 10));
  // A 0 byte in a name is escaped as 0 0xff; 200 takes two bytes: 0xc0c8.
  EXPECT_EQ(EncodeTensorNameSlice(std::string("a\0", 2), *TensorSlice::Parse("200,1")),
            std::string("\x00\x61\x00\xff\x00\x01\x01\x01\xc0\xc8\x81", 11));
  // -65 takes two bytes too: 0x3fbf.
  TensorSliceProto proto;
  auto* e = proto.add_extent();
  e->set_start(70000);
  e->set_length(1);
  auto big = TensorSlice::FromProto(proto);
  ASSERT_TRUE(big.ok());
  // 70000 = 0x11170, 17 significant bits: 3 bytes, header 0xe0.
  EXPECT_EQ(EncodeTensorNameSlice("", *big),
            std::string("\x00\x00\x01\x01\x01\xe1\x11\x70\x81", 9));
}

TEST(TensorSliceTest, CopiesIntersections) {
  const TensorShape full({3, 3});
  Tensor whole = Tensor::FromVector<int32_t>({0, 1, 2, 3, 4, 5, 6, 7, 8}, full);
  auto corner = TensorSlice::Parse("1,2:1,2");
  ASSERT_TRUE(corner.ok());
  Tensor part(DT_INT32, TensorShape({2, 2}));
  EXPECT_EQ(CopyIntersection(full, TensorSlice::Full(2), whole, *corner, &part), 4);
  EXPECT_EQ(std::vector<int32_t>(part.data<int32_t>(), part.data<int32_t>() + 4),
            (std::vector<int32_t>{4, 5, 7, 8}));
  auto row = TensorSlice::Parse("0,1:-");
  EXPECT_EQ(IntersectionSize(full, *row, *corner), 0);
  EXPECT_FALSE(row->Overlaps(*corner, full));
  EXPECT_TRUE(TensorSlice::Full(2).Overlaps(*corner, full));
}

}  // namespace
}  // namespace checkpoint
}  // namespace tensorgrid
