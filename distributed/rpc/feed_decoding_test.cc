#include "distributed/rpc/feed_decoding.h"

#include "core/framework/tensor_codec.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

NamedTensorProto Named(const std::string& name, const Tensor& tensor) {
  NamedTensorProto named;
  named.set_name(name);
  TensorToProto(tensor, named.mutable_tensor());
  return named;
}

Tensor Scalar(float v) {
  Tensor t(DT_FLOAT, TensorShape({}));
  t.data<float>()[0] = v;
  return t;
}

TEST(FeedDecodingTest, RunGraphFeedsArePlacedByIndex) {
  google::protobuf::RepeatedPtrField<NamedTensorProto> send;
  *send.Add() = Named("1", Scalar(2));
  *send.Add() = Named("0", Scalar(1));
  std::vector<Tensor> feeds;
  ASSERT_OK(DecodeRunGraphFeeds(send, &feeds));
  ASSERT_EQ(feeds.size(), 2u);
  EXPECT_EQ(feeds[0].data<float>()[0], 1);
  EXPECT_EQ(feeds[1].data<float>()[0], 2);
}

TEST(FeedDecodingTest, RunGraphFeedIndexOutOfRangeOrRepeatedIsInvalidArgument) {
  google::protobuf::RepeatedPtrField<NamedTensorProto> send;
  *send.Add() = Named("0", Scalar(1));
  *send.Add() = Named("2", Scalar(2));
  std::vector<Tensor> feeds;
  EXPECT_STATUS(DecodeRunGraphFeeds(send, &feeds), kInvalidArgument, "feed '2' is not an _Arg");
  send.Mutable(1)->set_name("0");
  EXPECT_STATUS(DecodeRunGraphFeeds(send, &feeds), kInvalidArgument, "feed 0 is given twice");
}

TEST(FeedDecodingTest, MalformedTensorIsInvalidArgumentNamingTheFeed) {
  google::protobuf::RepeatedPtrField<NamedTensorProto> named;
  *named.Add() = Named("x:0", Scalar(1));
  named.Mutable(0)->mutable_tensor()->set_tensor_content("abc");  // 3 bytes for a float
  EXPECT_STATUS(DecodeRunStepFeeds(named).status(), kInvalidArgument, "feed 'x:0'");
  google::protobuf::RepeatedPtrField<TensorProto> positional;
  *positional.Add() = named.Get(0).tensor();
  EXPECT_STATUS(DecodeRunCallableFeeds(positional).status(), kInvalidArgument, "feed 0");
  named.Mutable(0)->set_name("0");
  std::vector<Tensor> feeds;
  EXPECT_STATUS(DecodeRunGraphFeeds(named, &feeds), kInvalidArgument, "feed 0");
}

}  // namespace
}  // namespace tensorgrid
