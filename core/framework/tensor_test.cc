#include "core/framework/tensor.h"

#include <malloc.h>

#include <algorithm>

#include "absl/base/config.h"
#if defined(ABSL_HAVE_ADDRESS_SANITIZER) || defined(ABSL_HAVE_THREAD_SANITIZER)
#include <sanitizer/allocator_interface.h>
#endif

#include "core/framework/tensor_codec.h"
#include "core/platform/env.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

TEST(TensorShapeTest, CountsElementsAndRejectsBadDims) {
  TensorShape s({2, 3, 4});
  EXPECT_EQ(s.num_elements(), 24);
  EXPECT_EQ(s.DebugString(), "[2,3,4]");
  EXPECT_EQ(TensorShape().num_elements(), 1);
  EXPECT_STATUS(BuildTensorShape({2, -1}).status(), kInvalidArgument, "negative");
  EXPECT_STATUS(BuildTensorShape({int64_t{1} << 40, int64_t{1} << 40}).status(), kInvalidArgument,
                "int64");
  std::vector<int64_t> too_many(33, 1);
  EXPECT_STATUS(BuildTensorShape(too_many).status(), kInvalidArgument, "rank 33");
}

TEST(TensorShapeTest, PartialShapeCompatibility) {
  PartialTensorShape p({-1, 3});
  EXPECT_TRUE(p.IsCompatibleWith(TensorShape({7, 3})));
  EXPECT_FALSE(p.IsCompatibleWith(TensorShape({7, 4})));
  EXPECT_FALSE(p.IsCompatibleWith(TensorShape({3})));
  EXPECT_TRUE(PartialTensorShape().IsCompatibleWith(TensorShape({1, 2, 3})));
  EXPECT_EQ(p.DebugString(), "[?,3]");
}

TEST(TensorTest, BufferIsAlignedAndShared) {
  Tensor a(DT_FLOAT, TensorShape({4, 2}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw_data()) % kTensorAlignment, 0u);
  Tensor b = a;
  EXPECT_TRUE(b.SharesBufferWith(a));
  EXPECT_FALSE(a.RefCountIsOne());
  Tensor c = a.DeepCopy();
  EXPECT_FALSE(c.SharesBufferWith(a));
}

// Elements read as another type, or a scalar of a tensor that is none,
// abort naming both, in every build (as TensorFlow's CHECK): never garbage.
TEST(TensorDeathTest, ElementsOfAnotherTypeOrANonScalarAbortNamingThem) {
  const Tensor counts(DT_INT64, TensorShape({}));
  EXPECT_DEATH(counts.scalar<float>(),
               "Tensor::data<float>\\(\\) of a tensor of int64 \\[\\]: the element types "
               "differ");
  const Tensor pair(DT_FLOAT, TensorShape({2}));
  EXPECT_DEATH(pair.scalar<float>(),
               "Tensor::scalar\\(\\) of a tensor of float \\[2\\]: it has 2 elements, not 1");
}

TEST(TensorTest, SliceSharesBufferAlongDimZero) {
  Tensor t = Tensor::FromVector<int32_t>({0, 1, 2, 3, 4, 5}, TensorShape({3, 2}));
  Tensor s = t.Slice(1, 3);
  EXPECT_TRUE(s.SharesBufferWith(t));
  ExpectTensorEqual<int32_t>(s, {2, 3, 4, 5}, TensorShape({2, 2}));
  s.data<int32_t>()[0] = 42;
  EXPECT_EQ(t.data<int32_t>()[2], 42);
}

TEST(TensorTest, StringTensorsOwnTheirObjects) {
  Tensor t(DT_STRING, TensorShape({2}));
  t.data<std::string>()[0] = std::string(100, 'x');
  Tensor copy = t.DeepCopy();
  t = Tensor();  // frees the original strings
  EXPECT_EQ(copy.data<std::string>()[0].size(), 100u);
}

TEST(TensorTest, AllocationCapIsResourceExhausted) {
  int64_t old = MaxTensorBytes();
  SetMaxTensorBytes(1024);
  EXPECT_STATUS(Tensor::Allocate(DT_FLOAT, TensorShape({1000})).status(), kResourceExhausted,
                "exceeds the limit");
  SetMaxTensorBytes(old);
}

TEST(TensorCodecTest, RoundTripsTensorContentAndTypedFields) {
  Tensor t = Tensor::FromVector<float>({1.5f, -2.f, 3.f}, TensorShape({3}));
  for (bool content : {true, false}) {
    TensorProto p;
    TensorToProto(t, &p, content);
    auto back = TensorFromProto(p);
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectTensorEqual<float>(*back, {1.5f, -2.f, 3.f}, TensorShape({3}));
  }
}

TEST(TensorCodecTest, SingleValueBroadcastsToShape) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.add_float_val(7.f);
  auto t = TensorFromProto(p);
  ASSERT_TRUE(t.ok());
  ExpectTensorEqual<float>(*t, {7, 7, 7, 7}, TensorShape({2, 2}));
}

TEST(TensorCodecTest, RejectsInconsistentProtos) {
  TensorProto p;
  p.set_dtype(DT_INT32);
  p.mutable_tensor_shape()->add_dim()->set_size(3);
  p.set_tensor_content(std::string(8, '\0'));
  EXPECT_STATUS(TensorFromProto(p).status(), kInvalidArgument, "needs 12");

  TensorProto neg;
  neg.set_dtype(DT_FLOAT);
  neg.mutable_tensor_shape()->add_dim()->set_size(-2);
  EXPECT_STATUS(TensorFromProto(neg).status(), kInvalidArgument, "negative");

  TensorProto many;
  many.set_dtype(DT_FLOAT);
  many.mutable_tensor_shape()->add_dim()->set_size(1);
  many.add_float_val(1);
  many.add_float_val(2);
  EXPECT_STATUS(TensorFromProto(many).status(), kInvalidArgument, "float_val");

  TensorProto bad_type;
  bad_type.set_dtype(DT_VARIANT);
  EXPECT_STATUS(TensorFromProto(bad_type).status(), kInvalidArgument, "unsupported dtype");
}

TEST(TensorCodecTest, BoolContentBytesBecomeZeroOrOne) {
  // Once bool 61 (undefined behaviour to read): any nonzero byte is true.
  TensorProto p;
  p.set_dtype(DT_BOOL);
  p.mutable_tensor_shape()->add_dim()->set_size(3);
  p.set_tensor_content(std::string("=\x01\x00", 3));
  auto t = TensorFromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  const uint8_t* bytes = static_cast<const uint8_t*>(t->raw_data());
  EXPECT_EQ(bytes[0], 1);
  EXPECT_EQ(bytes[1], 1);
  EXPECT_EQ(bytes[2], 0);
}

TEST(TensorCodecTest, HugeDtypeIsInvalidArgumentNamingIt) {
  // Once a stack overflow: the dtype's name stripped "_ref" 21 million times.
  TensorProto huge;
  huge.set_dtype(static_cast<DataType>(2147483647));
  EXPECT_STATUS(TensorFromProto(huge).status(), kInvalidArgument,
                "unsupported dtype unknown dtype 2147483647");
  EXPECT_EQ(DataTypeString(static_cast<DataType>(205)), "unknown dtype 205");
  EXPECT_EQ(DataTypeString(MakeRefType(DT_FLOAT)), "float_ref");
}

TEST(TensorCodecTest, StringsAndInt64AndBool) {
  TensorProto p;
  p.set_dtype(DT_STRING);
  p.add_string_val("model");
  auto s = TensorFromProto(p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->scalar<std::string>(), "model");

  Tensor i = Tensor::FromVector<int64_t>({int64_t{1} << 40, -3}, TensorShape({2}));
  TensorProto ip;
  TensorToProto(i, &ip, /*use_tensor_content=*/false);
  EXPECT_EQ(ip.int64_val_size(), 2);
  auto back = TensorFromProto(ip);
  ASSERT_TRUE(back.ok());
  ExpectTensorEqual<int64_t>(*back, {int64_t{1} << 40, -3}, TensorShape({2}));
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

TEST(TensorBufferCacheTest, LargeBuffersAreReusedAndStillAligned) {
  void* first;
  {
    Tensor t(DT_FLOAT, TensorShape({1 << 20}));  // 4 MiB
    first = t.raw_data();
  }
  Tensor again(DT_FLOAT, TensorShape({1 << 20}));
  EXPECT_EQ(again.raw_data(), first);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(again.raw_data()) % kTensorAlignment, 0u);
  // A slightly smaller tensor of the same size class reuses it too.
  void* p = again.raw_data();
  again = Tensor();
  Tensor smaller(DT_FLOAT, TensorShape({(1 << 20) - 1000}));
  EXPECT_EQ(smaller.raw_data(), p);
}

// Bytes malloc has handed out and not had back: every arena, mmapped blocks
// included. What the cache keeps stays in use; what it frees does not.
// (Under a sanitizer, malloc is the sanitizer's, and glibc's counts stay 0.)
int64_t MallocInUseBytes() {
#if defined(ABSL_HAVE_ADDRESS_SANITIZER) || defined(ABSL_HAVE_THREAD_SANITIZER)
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd);
#endif
}

// With no capacity, a dying tensor's large buffer goes back to malloc there
// and then; with the default one it is kept, until the capacity drops to 0.
TEST(TensorBufferCacheTest, ZeroCapacityFreesAtOnce) {
  constexpr int64_t kBytes = int64_t{1} << 20;
  const TensorShape shape({kBytes / 4});  // floats
  SetTensorBufferCacheBytes(0);
  Tensor t(DT_FLOAT, shape);
  t.data<float>()[0] = 1;
  int64_t before = MallocInUseBytes();
  t = Tensor();
  EXPECT_GE(before - MallocInUseBytes(), kBytes);

  SetTensorBufferCacheBytes(size_t{256} << 20);
  t = Tensor(DT_FLOAT, shape);
  before = MallocInUseBytes();
  t = Tensor();
  EXPECT_LT(before - MallocInUseBytes(), kBytes);  // cached: still in use
  before = MallocInUseBytes();
  SetTensorBufferCacheBytes(0);
  EXPECT_GE(before - MallocInUseBytes(), kBytes);
  SetTensorBufferCacheBytes(DefaultTensorBufferCacheBytes());
}

// The default holds a training step's activations where memory allows: an
// eighth of what the process may use, between 256 MiB and 4 GiB.
TEST(TensorBufferCacheTest, TheDefaultIsAnEighthOfTheMemoryWithinBounds) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  EXPECT_EQ(TensorBufferCacheBytesFor(0), size_t{256} << 20);  // unknown
  EXPECT_EQ(TensorBufferCacheBytesFor(kGiB), size_t{256} << 20);
  EXPECT_EQ(TensorBufferCacheBytesFor(24 * kGiB), size_t{3} << 30);
  EXPECT_EQ(TensorBufferCacheBytesFor(128 * kGiB), size_t{4} << 30);
  EXPECT_EQ(DefaultTensorBufferCacheBytes(), TensorBufferCacheBytesFor(AvailableMemoryBytes()));
  SetTensorBufferCacheBytes(size_t{1} << 20);
  EXPECT_EQ(TensorBufferCacheBytes(), size_t{1} << 20);
  SetTensorBufferCacheBytes(DefaultTensorBufferCacheBytes());
  EXPECT_EQ(TensorBufferCacheBytes(), DefaultTensorBufferCacheBytes());
}

}  // namespace
}  // namespace tensorgrid
