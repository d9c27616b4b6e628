#include "distributed/rpc/tensor_coding.h"

#include <string>
#include <vector>

#include "core/framework/tensor_codec.h"
#include "gtest/gtest.h"
#include "proto/worker.pb.h"

namespace tensorgrid {
namespace {

std::string Flatten(const grpc::ByteBuffer& wire) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(wire.Dump(&slices).ok());
  std::string out;
  for (const grpc::Slice& s : slices)
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

// `bytes` cut into slices of `chunk` bytes, the way a transport may deliver them.
grpc::ByteBuffer Sliced(const std::string& bytes, size_t chunk) {
  std::vector<grpc::Slice> slices;
  for (size_t i = 0; i < bytes.size(); i += chunk) {
    slices.emplace_back(bytes.data() + i, std::min(chunk, bytes.size() - i));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

grpc::ByteBuffer Encode(const Tensor& t) {
  grpc::ByteBuffer wire;
  absl::Status s = EncodeRecvTensorResponse(t, "a;0;b;t;0:0", &wire);
  EXPECT_TRUE(s.ok()) << s;
  return wire;
}

std::string ProtobufEncoding(const Tensor& t) {
  RecvTensorResponse response;
  TensorToProto(t, response.mutable_tensor());
  return response.SerializeAsString();
}

Tensor Iota(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

void ExpectSameTensor(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  if (a.dtype() == DT_STRING) {
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      EXPECT_EQ(a.data<std::string>()[i], b.data<std::string>()[i]) << i;
    }
  } else {
    ASSERT_EQ(a.TotalBytes(), b.TotalBytes());
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()), 0);
  }
}

std::vector<Tensor> SampleTensors() {
  Tensor strings(DT_STRING, TensorShape({3}));
  strings.data<std::string>()[0] = "";
  strings.data<std::string>()[1] = "one";
  strings.data<std::string>()[2] = std::string(5000, 'x');
  Tensor halves(DT_HALF, TensorShape({2}));
  halves.data<half>()[0] = half(1.5f);
  halves.data<half>()[1] = half(-2.f);
  return {
      Tensor::Scalar<float>(2.5f),
      Tensor::FromVector<float>({1, -2, 3, 4, 5, 6}, TensorShape({2, 3})),
      Tensor::FromVector<int32_t>({7, -8, 1 << 30}, TensorShape({3})),
      Tensor::FromVector<int64_t>({int64_t{1} << 40, -1}, TensorShape({2, 1})),
      Tensor::FromVector<bool>({true, false, true}, TensorShape({3})),
      halves,
      Tensor(DT_FLOAT, TensorShape({0, 5})),
      Iota(1 << 16),                  // 256 KiB: the referenced-slice path
      Iota(1 << 10).Slice(100, 900),  // a slice with an offset into its buffer
      strings,
      Tensor(DT_STRING, TensorShape({0})),
  };
}

TEST(TensorCodingTest, BytesAreExactlyProtobufsSerialization) {
  for (const Tensor& t : SampleTensors()) {
    EXPECT_EQ(Flatten(Encode(t)), ProtobufEncoding(t)) << t.DebugString();
  }
}

TEST(TensorCodingTest, ResponseParsesAsAnOrdinaryRecvTensorResponse) {
  const Tensor t = Iota(100000);
  RecvTensorResponse response;
  ASSERT_TRUE(response.ParseFromString(Flatten(Encode(t))));
  absl::StatusOr<Tensor> parsed = TensorFromProto(response.tensor());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ExpectSameTensor(*parsed, t);
}

TEST(TensorCodingTest, RoundTripsEveryDtypeAndShape) {
  for (const Tensor& t : SampleTensors()) {
    absl::StatusOr<Tensor> decoded = DecodeRecvTensorResponse(Encode(t));
    ASSERT_TRUE(decoded.ok()) << t.DebugString() << ": " << decoded.status();
    ExpectSameTensor(*decoded, t);
  }
}

TEST(TensorCodingTest, LargeTensorIsReferencedNotCopied) {
  const Tensor t = Iota(1 << 16);
  {
    grpc::ByteBuffer wire = Encode(t);
    std::vector<grpc::Slice> slices;
    ASSERT_TRUE(wire.Dump(&slices).ok());
    ASSERT_EQ(slices.size(), 2u);
    EXPECT_EQ(static_cast<const void*>(slices[1].begin()), t.raw_data());
    EXPECT_EQ(slices[1].size(), t.TotalBytes());
    EXPECT_FALSE(t.RefCountIsOne());  // the slice holds a reference
  }
  EXPECT_TRUE(t.RefCountIsOne());  // released with the last slice
}

TEST(TensorCodingTest, DecodesAcrossArbitrarySliceBoundaries) {
  const Tensor t = Iota(5000);
  const std::string bytes = ProtobufEncoding(t);
  for (size_t chunk : {1, 3, 7, 4096, 65536}) {
    absl::StatusOr<Tensor> decoded = DecodeRecvTensorResponse(Sliced(bytes, chunk));
    ASSERT_TRUE(decoded.ok()) << chunk << ": " << decoded.status();
    ExpectSameTensor(*decoded, t);
  }
}

TEST(TensorCodingTest, DecodesIntoAGivenBufferThatFits) {
  const Tensor sent = Iota(1000);
  Tensor output(DT_FLOAT, TensorShape({3000}));
  const Tensor place = output.Slice(1000, 2000);
  absl::StatusOr<Tensor> got = DecodeRecvTensorResponse(Sliced(Flatten(Encode(sent)), 777), &place);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->raw_data(), place.raw_data());  // no second copy
  ExpectSameTensor(*got, sent);
  EXPECT_EQ(output.data<float>()[1999], 999.f);

  // A buffer of another size or dtype is left alone: a fresh tensor.
  const Tensor small(DT_FLOAT, TensorShape({10}));
  const Tensor ints(DT_INT32, TensorShape({1000}));
  for (const Tensor* other : {&small, &ints}) {
    got = DecodeRecvTensorResponse(Encode(sent), other);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_NE(got->raw_data(), other->raw_data());
    ExpectSameTensor(*got, sent);
  }
}

TEST(TensorCodingTest, DecodesTypedValueFieldsThroughProtobuf) {
  const Tensor t = Tensor::FromVector<int32_t>({1, 2, 3}, TensorShape({3}));
  RecvTensorResponse response;
  TensorToProto(t, response.mutable_tensor(), /*use_tensor_content=*/false);
  absl::StatusOr<Tensor> decoded =
      DecodeRecvTensorResponse(Sliced(response.SerializeAsString(), 5));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectSameTensor(*decoded, t);
}

TEST(TensorCodingTest, DecodesFieldsInAnotherOrder) {
  // tensor_content before dtype and shape: valid protobuf, not our layout.
  const Tensor t = Tensor::FromVector<float>({1, 2}, TensorShape({2}));
  TensorProto content, rest;
  content.set_tensor_content(t.raw_data(), t.TotalBytes());
  rest.set_dtype(DT_FLOAT);
  t.shape().AsProto(rest.mutable_tensor_shape());
  const std::string tensor = content.SerializeAsString() + rest.SerializeAsString();
  RecvTensorResponse response;
  ASSERT_TRUE(response.mutable_tensor()->ParseFromString(tensor));
  const std::string bytes = std::string(1, '\x0a') + static_cast<char>(tensor.size()) + tensor;
  absl::StatusOr<Tensor> decoded = DecodeRecvTensorResponse(Sliced(bytes, 1024));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectSameTensor(*decoded, t);
}

TEST(TensorCodingTest, TruncatedResponsesAreErrorsNotCrashes) {
  for (const Tensor& t : {Iota(300), Iota(70000)}) {
    const std::string bytes = ProtobufEncoding(t);
    for (size_t cut = 0; cut < bytes.size(); cut += (cut < 64 ? 1 : 997)) {
      absl::StatusOr<Tensor> decoded = DecodeRecvTensorResponse(Sliced(bytes.substr(0, cut), 100));
      ASSERT_FALSE(decoded.ok()) << "cut at " << cut;
      EXPECT_TRUE(decoded.status().code() == absl::StatusCode::kDataLoss ||
                  decoded.status().code() == absl::StatusCode::kInvalidArgument)
          << "cut at " << cut << ": " << decoded.status();
    }
  }
}

TEST(TensorCodingTest, TensorFieldThatClaimsMoreBytesThanFollowIsDataLoss) {
  // The tensor's fields are all there, but field 1 says it is 4 bytes
  // longer: protobuf refuses it, and so must the fast path.
  std::string bytes = ProtobufEncoding(Iota(4));
  ASSERT_LT(static_cast<uint8_t>(bytes[1]), 0x7c);  // a one-byte length
  bytes[1] = static_cast<char>(bytes[1] + 4);
  for (const size_t chunk : {size_t{1}, size_t{7}, bytes.size()}) {
    absl::StatusOr<Tensor> decoded = DecodeRecvTensorResponse(Sliced(bytes, chunk));
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
  }
}

TEST(TensorCodingTest, BoolContentBytesBecomeZeroOrOne) {
  RecvTensorResponse response;
  response.mutable_tensor()->set_dtype(DT_BOOL);
  response.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(2);
  response.mutable_tensor()->set_tensor_content(std::string("\x07\x00", 2));
  absl::StatusOr<Tensor> decoded = DecodeRecvTensorResponse(Sliced(response.SerializeAsString(), 3));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(static_cast<const uint8_t*>(decoded->raw_data())[0], 1);
  EXPECT_EQ(static_cast<const uint8_t*>(decoded->raw_data())[1], 0);
}

TEST(TensorCodingTest, GarbageIsDataLoss) {
  absl::StatusOr<Tensor> decoded =
      DecodeRecvTensorResponse(Sliced("\x0a\xff\xff\xff\xff\x0f garbage", 4));
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
  EXPECT_NE(decoded.status().message().find("does not parse as a RecvTensorResponse"),
            std::string::npos)
      << decoded.status();
}

TEST(TensorCodingTest, ContentOfTheWrongSizeIsInvalidArgument) {
  RecvTensorResponse response;
  TensorProto* proto = response.mutable_tensor();
  proto->set_dtype(DT_FLOAT);
  proto->mutable_tensor_shape()->add_dim()->set_size(4);
  proto->set_tensor_content(std::string(15, '\0'));
  absl::StatusOr<Tensor> decoded =
      DecodeRecvTensorResponse(Sliced(response.SerializeAsString(), 8));
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument) << decoded.status();
  EXPECT_NE(decoded.status().message().find("15 bytes of tensor_content"), std::string::npos)
      << decoded.status();
}

TEST(TensorCodingTest, NegativeDimensionIsInvalidArgument) {
  RecvTensorResponse response;
  TensorProto* proto = response.mutable_tensor();
  proto->set_dtype(DT_FLOAT);
  proto->mutable_tensor_shape()->add_dim()->set_size(-3);
  proto->set_tensor_content(std::string(12, '\0'));
  absl::StatusOr<Tensor> decoded =
      DecodeRecvTensorResponse(Sliced(response.SerializeAsString(), 8));
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument) << decoded.status();
}

TEST(TensorCodingTest, EmptyResponseIsInvalidArgumentNamingTheDtype) {
  absl::StatusOr<Tensor> decoded = DecodeRecvTensorResponse(Sliced("", 1));
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument) << decoded.status();
  EXPECT_NE(decoded.status().message().find("dtype"), std::string::npos) << decoded.status();
}

TEST(TensorCodingTest, ResponseOverTheLimitIsResourceExhaustedNamingKeySizeAndLimit) {
  // The default limit is what one gRPC message can carry; a small limit here
  // stands in for it so that no test allocates 2 GiB.
  EXPECT_EQ(kMaxGrpcMessageBytes, static_cast<size_t>(INT_MAX));
  const Tensor t = Iota(1000);  // 4000 bytes of content
  const size_t size = ProtobufEncoding(t).size();
  grpc::ByteBuffer wire;
  absl::Status s = EncodeRecvTensorResponse(t, "a;0;b;big;0:0", &wire, /*max_bytes=*/size - 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("'a;0;b;big;0:0'"), std::string::npos) << s;
  EXPECT_NE(s.message().find(std::to_string(size) + " bytes"), std::string::npos) << s;
  EXPECT_NE(s.message().find("limit of " + std::to_string(size - 1)), std::string::npos) << s;

  EXPECT_TRUE(EncodeRecvTensorResponse(t, "k", &wire, /*max_bytes=*/size).ok());
}

TEST(TensorCodingTest, StringResponseOverTheLimitIsResourceExhausted) {
  Tensor t(DT_STRING, TensorShape({2}));
  t.data<std::string>()[0] = std::string(600, 'a');
  grpc::ByteBuffer wire;
  absl::Status s = EncodeRecvTensorResponse(t, "a;0;b;s;0:0", &wire, /*max_bytes=*/512);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("'a;0;b;s;0:0'"), std::string::npos) << s;
}

TEST(TensorCodingTest, ParseFromByteBufferReadsAcrossSlices) {
  RecvTensorRequest request;
  request.set_step_id(42);
  request.set_rendezvous_key("a;0;b;t;0:0");
  RecvTensorRequest parsed;
  ASSERT_TRUE(ParseFromByteBuffer(Sliced(request.SerializeAsString(), 3), &parsed));
  EXPECT_EQ(parsed.step_id(), 42);
  EXPECT_EQ(parsed.rendezvous_key(), "a;0;b;t;0:0");
  EXPECT_FALSE(ParseFromByteBuffer(Sliced("\x12\x50 short", 2), &parsed));
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

TEST(BulkResponseTest, RoundTripsDtypeShapeAndTicket) {
  const Tensor t(DT_INT32, TensorShape({4, 1 << 16}));
  grpc::ByteBuffer wire;
  ASSERT_TRUE(EncodeBulkResponse(t, std::string(16, 'q'), 4242, &wire).ok());
  std::optional<absl::StatusOr<BulkResponse>> got = DecodeBulkResponse(wire);
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(got->ok()) << got->status();
  EXPECT_EQ((*got)->id, std::string(16, 'q'));
  EXPECT_EQ((*got)->port, 4242);
  EXPECT_EQ((*got)->tensor.dtype(), DT_INT32);
  EXPECT_EQ((*got)->tensor.shape(), t.shape());
  EXPECT_FALSE((*got)->tensor.SharesBufferWith(t));
}

TEST(BulkResponseTest, FillsAGivenBufferThatFits) {
  const Tensor t(DT_FLOAT, TensorShape({8, 8}));
  grpc::ByteBuffer wire;
  ASSERT_TRUE(EncodeBulkResponse(t, std::string(16, 'q'), 1, &wire).ok());
  const Tensor into(DT_FLOAT, TensorShape({64}));
  std::optional<absl::StatusOr<BulkResponse>> got = DecodeBulkResponse(wire, &into);
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_TRUE((*got)->tensor.SharesBufferWith(into));
  EXPECT_EQ((*got)->tensor.shape(), t.shape());
  const Tensor other(DT_INT32, TensorShape({64}));  // another dtype: a fresh tensor
  got = DecodeBulkResponse(wire, &other);
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_FALSE((*got)->tensor.SharesBufferWith(other));
}

TEST(BulkResponseTest, OrdinaryResponsesAreNotTickets) {
  EXPECT_FALSE(DecodeBulkResponse(Encode(Iota(10))).has_value());
  EXPECT_FALSE(DecodeBulkResponse(Sliced("garbage", 3)).has_value());
}

TEST(BulkResponseTest, TicketThatDescribesNoTensorIsInvalidArgument) {
  RecvTensorResponse response;
  response.mutable_tensor()->set_dtype(DT_FLOAT);
  response.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(10);
  response.mutable_bulk()->set_id(std::string(16, 'q'));
  response.mutable_bulk()->set_port(1);
  response.mutable_bulk()->set_bytes(41);  // 10 floats are 40 bytes
  std::optional<absl::StatusOr<BulkResponse>> got =
      DecodeBulkResponse(Sliced(response.SerializeAsString(), 5));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status().code(), absl::StatusCode::kInvalidArgument) << got->status();
  response.mutable_bulk()->set_bytes(40);
  response.mutable_tensor()->set_dtype(DT_STRING);
  got = DecodeBulkResponse(Sliced(response.SerializeAsString(), 5));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status().code(), absl::StatusCode::kInvalidArgument) << got->status();
  response.mutable_tensor()->set_dtype(DT_FLOAT);
  response.mutable_tensor()->mutable_tensor_shape()->mutable_dim(0)->set_size(-3);
  got = DecodeBulkResponse(Sliced(response.SerializeAsString(), 5));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status().code(), absl::StatusCode::kInvalidArgument) << got->status();
}

TEST(BulkResponseTest, TicketWithoutAnIdIsInvalidArgument) {
  // Callers take an empty id for "the content is here": such a ticket would
  // hand them a tensor whose bytes were never written.
  RecvTensorResponse response;
  response.mutable_tensor()->set_dtype(DT_FLOAT);
  response.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(4);
  response.mutable_bulk()->set_port(4444);
  response.mutable_bulk()->set_bytes(16);
  BulkResponse ticket;
  absl::StatusOr<Tensor> decoded =
      DecodeRecvTensorResponse(Sliced(response.SerializeAsString(), 3), nullptr, &ticket);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument) << decoded.status();
  EXPECT_NE(decoded.status().message().find("without an id"), std::string::npos)
      << decoded.status();
  std::optional<absl::StatusOr<BulkResponse>> got =
      DecodeBulkResponse(Sliced(response.SerializeAsString(), 5));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status().code(), absl::StatusCode::kInvalidArgument) << got->status();
}

}  // namespace
}  // namespace tensorgrid
