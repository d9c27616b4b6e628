#include "distributed/transport/frames.h"

#include <string>

#include "absl/strings/cord.h"
#include "core/platform/status.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace bulk {
namespace {

TEST(FramesTest, EveryRequestKindIsNamedByItsMagicAndGarbageByNone) {
  EXPECT_EQ(RequestKindOf("TGB1"), RequestKind::kTicket);
  EXPECT_EQ(RequestKindOf("TGR5"), RequestKind::kRecvBuf);
  EXPECT_EQ(RequestKindOf("TGV2"), RequestKind::kRecvTensor);
  EXPECT_EQ(RequestKindOf("TGW2"), RequestKind::kRecvTensors);
  EXPECT_EQ(RequestKindOf("TGC2"), RequestKind::kCall);
  // Earlier versions' magics (without beats) are garbage to this server.
  EXPECT_EQ(RequestKindOf("TGR3"), std::nullopt);
  EXPECT_EQ(RequestKindOf("TGC1"), std::nullopt);
  EXPECT_EQ(RequestKindOf("TG"), std::nullopt);
  EXPECT_EQ(EncodeTicketRequest(std::string(kBulkTicketBytes, 'i')),
            "TGB1" + std::string(kBulkTicketBytes, 'i'));
}

TEST(FramesTest, TensorRequestsDecodeAsTheyWereEncoded) {
  for (bool rendezvous : {false, true}) {
    TensorRequest request;
    request.rendezvous = rendezvous;
    request.token = "secret";
    request.addressee = "/job:ps/replica:0/task:0";
    request.key = "chunk-7";
    request.may_read_in_place = true;
    request.wait_ms = 1234;
    request.step_id = rendezvous ? -5 : 0;
    const std::string bytes = request.Encode();
    ASSERT_EQ(RequestKindOf(bytes.substr(0, kMagicBytes)),
              rendezvous ? RequestKind::kRecvTensor : RequestKind::kRecvBuf);
    const size_t fixed_bytes = TensorRequestFixed::Bytes(rendezvous);
    const TensorRequestFixed fixed =
        TensorRequestFixed::Decode(bytes.data() + kMagicBytes, rendezvous);
    EXPECT_EQ(fixed.token_bytes, 6u);
    EXPECT_EQ(fixed.addressee_bytes, request.addressee.size());
    EXPECT_EQ(fixed.key_bytes, 7u);
    EXPECT_TRUE(fixed.may_read_in_place);
    EXPECT_EQ(fixed.wait_ms, 1234u);
    EXPECT_EQ(fixed.step_id, request.step_id);
    EXPECT_EQ(bytes.substr(kMagicBytes + fixed_bytes),
              request.token + request.addressee + request.key);
  }
}

TEST(FramesTest, KeyBlocksDecodeAsTheyWereEncodedAndOnlyThen) {
  const std::vector<std::string> keys = {"a;1;b;x;0:0", std::string(kMaxKeyBytes, 'k'), "c"};
  const std::string block = EncodeKeys(keys);
  EXPECT_EQ(DecodeKeys(block), keys);
  TensorRequest request;
  request.rendezvous = request.batch = true;
  request.key = block;
  const std::string bytes = request.Encode();
  EXPECT_EQ(RequestKindOf(bytes.substr(0, kMagicBytes)), RequestKind::kRecvTensors);
  EXPECT_EQ(TensorRequestFixed::Decode(bytes.data() + kMagicBytes, true).key_bytes, block.size());
  // Cut short, with bytes to spare, none, an empty key, a key too long.
  EXPECT_EQ(DecodeKeys(block.substr(0, block.size() - 1)), std::nullopt);
  EXPECT_EQ(DecodeKeys(block + "x"), std::nullopt);
  EXPECT_EQ(DecodeKeys(EncodeKeys({})), std::nullopt);
  EXPECT_EQ(DecodeKeys(EncodeKeys({"a", ""})), std::nullopt);
  EXPECT_EQ(DecodeKeys(EncodeKeys({std::string(kMaxKeyBytes + 1, 'k')})), std::nullopt);
  EXPECT_EQ(DecodeKeys(std::string("\xff\xff\xff\x7f", 4)), std::nullopt);  // 2^31 keys
  EXPECT_EQ(DecodeKeys(""), std::nullopt);
  // kMaxBatchKeys, and one more.
  std::vector<std::string> many(kMaxBatchKeys, "k");
  EXPECT_TRUE(DecodeKeys(EncodeKeys(many)).has_value());
  many.push_back("k");
  EXPECT_EQ(DecodeKeys(EncodeKeys(many)), std::nullopt);
}

TEST(FramesTest, ManyOrLongKeysAreCutIntoRequestsThatFit) {
  EXPECT_TRUE(BatchesOf({}).empty());
  EXPECT_EQ(BatchesOf({"a", "b"}), (std::vector<std::pair<size_t, size_t>>{{0, 2}}));
  std::vector<std::string> many(2 * kMaxBatchKeys + 5, "key");
  EXPECT_EQ(BatchesOf(many), (std::vector<std::pair<size_t, size_t>>{
                                 {0, kMaxBatchKeys},
                                 {kMaxBatchKeys, 2 * kMaxBatchKeys},
                                 {2 * kMaxBatchKeys, 2 * kMaxBatchKeys + 5}}));
  const std::vector<std::string> long_keys(700, std::string(kMaxKeyBytes, 'k'));
  size_t next = 0;
  for (const auto& [first, end] : BatchesOf(long_keys)) {
    EXPECT_EQ(first, next);
    ASSERT_LT(first, end);
    next = end;
    const std::vector<std::string> run(long_keys.begin() + first, long_keys.begin() + end);
    EXPECT_TRUE(DecodeKeys(EncodeKeys(run)).has_value()) << first << ".." << end;
  }
  EXPECT_EQ(next, long_keys.size());
  EXPECT_GT(BatchesOf(long_keys).size(), 2u);  // 4 MiB of keys: over the 1 MiB block
}

TEST(FramesTest, CallRequestsDecodeAsTheyWereEncoded) {
  const std::string bytes = EncodeCallRequest("t", "task", "RunGraph", 99, "payload");
  ASSERT_EQ(RequestKindOf(bytes.substr(0, kMagicBytes)), RequestKind::kCall);
  const CallRequestFixed fixed = CallRequestFixed::Decode(bytes.data() + kMagicBytes);
  EXPECT_EQ(fixed.token_bytes, 1u);
  EXPECT_EQ(fixed.addressee_bytes, 4u);
  EXPECT_EQ(fixed.method_bytes, 8u);
  EXPECT_EQ(fixed.wait_ms, 99u);
  EXPECT_EQ(fixed.request_bytes, 7u);
  EXPECT_EQ(bytes.substr(kMagicBytes + CallRequestFixed::kBytes), "ttaskRunGraphpayload");
}

TEST(FramesTest, ErrorsCrossWithCodeMessageAndPayloads) {
  absl::Status status = errors::Aborted("step 7 was cancelled");
  status.SetPayload("type.tensorgrid/derived", absl::Cord("1"));
  const std::string bytes = EncodeError(status, AnswerKind::kNotServed);
  ASSERT_EQ(static_cast<AnswerKind>(bytes[0]), AnswerKind::kNotServed);
  const ErrorHeader header = ErrorHeader::Decode(bytes.data() + 1);
  ASSERT_EQ(header.body_bytes, bytes.size() - 1 - ErrorHeader::kBytes);
  const absl::Status decoded =
      DecodeError(header.code, bytes.substr(1 + ErrorHeader::kBytes), "a call");
  EXPECT_EQ(decoded, status);
  EXPECT_EQ(AnswerSize(bytes), bytes.size());
}

TEST(FramesTest, ErrorsThatDoNotParseAreDataLossAndUnknownCodesUnknown) {
  EXPECT_STATUS(DecodeError(2, std::string("\x05\x00\x00\x00" "ab", 6), "a call"), kDataLoss,
                "a call: an error answer that does not parse");
  EXPECT_STATUS(DecodeError(2, std::string("\x01\x00\x00\x00m\x03\x00\x00\x00url", 12), "x"),
                kDataLoss, "does not parse");  // a payload without its value
  EXPECT_EQ(DecodeError(99, std::string("\x01\x00\x00\x00m", 5), "x").code(),
            absl::StatusCode::kUnknown);
  EXPECT_EQ(DecodeError(0, std::string("\x01\x00\x00\x00m", 5), "x").code(),
            absl::StatusCode::kUnknown);  // an error answer is never OK
}

TEST(FramesTest, LongMessagesAreCutToTheErrorLimit) {
  const std::string bytes = EncodeError(errors::Internal(std::string(1 << 20, 'm')));
  EXPECT_LE(bytes.size(), 1 + ErrorHeader::kBytes + kMaxErrorBytes);
}

TEST(FramesTest, TensorHeadersAndInPlaceLocationsRoundTrip) {
  TensorHeader header;
  header.dtype = 1;
  header.dims = {2, 0, 3};
  header.length = 0;
  std::string bytes(1, static_cast<char>(AnswerKind::kTensor));
  header.AppendTo(&bytes);
  TensorHeader decoded = TensorHeader::DecodeRank(bytes.data() + 1);
  EXPECT_EQ(decoded.dtype, 1u);
  ASSERT_EQ(decoded.rank, 3u);
  ASSERT_EQ(bytes.size(), 1 + TensorHeader::kRankBytes + TensorHeader::RestBytes(3));
  decoded.DecodeRest(bytes.data() + 1 + TensorHeader::kRankBytes);
  EXPECT_EQ(decoded.dims, header.dims);
  EXPECT_EQ(AnswerSize(bytes), bytes.size());
  EXPECT_EQ(AnswerSize(bytes.substr(0, 12)), std::nullopt);  // more bytes needed

  InPlaceLocation where{42, 0x1000, 0x2000, std::string(kNonceBytes, 'n')};
  std::string located;
  where.AppendTo(&located);
  ASSERT_EQ(located.size(), InPlaceLocation::kBytes);
  const InPlaceLocation back = InPlaceLocation::Decode(located.data());
  EXPECT_EQ(back.pid, 42u);
  EXPECT_EQ(back.address, 0x1000u);
  EXPECT_EQ(back.nonce_address, 0x2000u);
  EXPECT_EQ(back.nonce, where.nonce);
}

TEST(FramesTest, AnswerSizeLeavesLargeAndUnknownAnswersToTheirReaders) {
  const std::string bytes = EncodeLengthAnswer(AnswerKind::kBytes, 5) + "hello";
  EXPECT_EQ(AnswerSize(bytes), bytes.size());
  EXPECT_EQ(AnswerSize(bytes.substr(0, 4)), std::nullopt);
  EXPECT_EQ(AnswerSize(std::string(1, static_cast<char>(AnswerKind::kInPlace))), kUnknownSize);
  EXPECT_EQ(AnswerSize(std::string(1, static_cast<char>(AnswerKind::kStillWorking))), kUnknownSize);
  EXPECT_EQ(AnswerSize(EncodeLengthAnswer(AnswerKind::kProto, kMaxAnswerBytes + 1)), kUnknownSize);
  EXPECT_EQ(AnswerSize("\x7f"), 1u);  // garbage: its reader refuses it at once
  std::string too_deep(1, static_cast<char>(AnswerKind::kTensor));
  TensorHeader header;
  header.dims.assign(kMaxRank + 1, 1);
  header.AppendTo(&too_deep);
  EXPECT_EQ(AnswerSize(too_deep), 1u);
  // An item: its head, then its own answer's size; an item in an item is
  // garbage.
  EXPECT_EQ(AnswerSize(EncodeItemHead(3) + bytes), 5 + bytes.size());
  EXPECT_EQ(DecodeItemIndex(EncodeItemHead(70000).data() + 1), 70000u);
  EXPECT_EQ(AnswerSize(EncodeItemHead(3)), std::nullopt);
  EXPECT_EQ(AnswerSize(EncodeItemHead(3) + bytes.substr(0, 4)), std::nullopt);
  EXPECT_EQ(AnswerSize(EncodeItemHead(3) + too_deep), 1u);
  EXPECT_EQ(AnswerSize(EncodeItemHead(3) + EncodeItemHead(4) + bytes), 1u);
  EXPECT_EQ(AnswerSize(EncodeItemHead(3) + std::string(1, static_cast<char>(AnswerKind::kInPlace))),
            kUnknownSize);
}

TEST(FramesTest, InPlaceAnswerSizeIsItsHeadWhenItsCopyIsSmall) {
  std::string answer(1, static_cast<char>(AnswerKind::kInPlace));
  TensorHeader header;
  header.dims = {2, 3};
  header.length = 24;
  header.AppendTo(&answer);
  const size_t head = answer.size();
  InPlaceLocation where;
  where.nonce.assign(kNonceBytes, 'n');
  where.AppendTo(&answer);
  EXPECT_EQ(InPlaceAnswerSize(answer, 24), head + InPlaceLocation::kBytes);
  EXPECT_EQ(InPlaceAnswerSize(answer.substr(0, head), 24), head + InPlaceLocation::kBytes);
  EXPECT_EQ(InPlaceAnswerSize(answer, 23), kUnknownSize);  // a copy for the pool
  EXPECT_EQ(InPlaceAnswerSize(answer.substr(0, head - 1), 24), std::nullopt);
  EXPECT_EQ(InPlaceAnswerSize(answer.substr(0, 1), 24), std::nullopt);
  std::string too_deep(1, static_cast<char>(AnswerKind::kInPlace));
  header.dims.assign(kMaxRank + 1, 1);
  header.AppendTo(&too_deep);
  EXPECT_EQ(InPlaceAnswerSize(too_deep, 24), 1u);
}

TEST(FramesTest, TicketAnswersAndWaitsRoundTrip) {
  TicketAnswer answer;
  answer.code = TicketAnswer::kUnknownTicket;
  answer.length = 1 << 20;
  char bytes[TicketAnswer::kBytes];
  answer.EncodeTo(bytes);
  const TicketAnswer back = TicketAnswer::Decode(bytes);
  EXPECT_EQ(back.code, TicketAnswer::kUnknownTicket);
  EXPECT_EQ(back.length, uint64_t{1} << 20);
  EXPECT_EQ(GrantedWait(uint64_t{1} << 62), kBulkMaxWait);
  EXPECT_EQ(GrantedWait(250), absl::Milliseconds(250));
  EXPECT_EQ(WaitMs(absl::Now() - absl::Seconds(1)), 0u);
  EXPECT_EQ(RandomBytes(16).size(), 16u);
  EXPECT_NE(RandomBytes(16), RandomBytes(16));
}

}  // namespace
}  // namespace bulk
}  // namespace tensorgrid
