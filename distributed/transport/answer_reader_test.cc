// The client's answer readers on bytes written by hand: what a server (or
// whatever took its port) may send. The bulk answers fuzzer
// (tests/fuzz/bulk_answers_fuzzer.cc) feeds them everything else.
#include "distributed/transport/answer_reader.h"

#include <sys/socket.h>

#include <atomic>
#include <string>

#include "core/platform/status_testutil.h"
#include "distributed/transport/socket.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace bulk {
namespace {

// A socketpair whose far end has sent `bytes` and hung up.
UniqueFd Sent(const std::string& bytes) {
  int ends[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
  UniqueFd far(ends[0]);
  EXPECT_TRUE(WriteFull(far.get(), bytes));
  return UniqueFd(ends[1]);
}

std::string What() { return "RecvTensor of 'k' from the bulk port h:1"; }

TEST(AnswerReaderTest, ATensorsBoolBytesArriveAsZeroOrOne) {
  TensorHeader header;
  header.dtype = DT_BOOL;
  header.dims = {3};
  header.length = 3;
  std::string answer;
  header.AppendTo(&answer);
  answer += std::string("\x05\x00\x01", 3);
  UniqueFd fd = Sent(answer);
  Tensor out;
  std::atomic<bool> refused{false};
  Incoming::Ahead ahead;
  Incoming in(fd.get(), &ahead);
  const AnswerRead read = ReadTensorAnswer(in, /*in_place=*/false, absl::Now() + absl::Seconds(10),
                                           What, nullptr, &out, &refused);
  ASSERT_OK(read.status);
  EXPECT_TRUE(read.reusable);
  const uint8_t* bytes = static_cast<const uint8_t*>(out.raw_data());
  EXPECT_EQ(bytes[0], 1);
  EXPECT_EQ(bytes[1], 0);
  EXPECT_EQ(bytes[2], 1);
}

TEST(AnswerReaderTest, ABodyClaimingMoreThanComesIsUnavailableNotAnAllocation) {
  // 2 GiB - 1 claimed, three bytes sent: read as they come, then the end.
  UniqueFd fd = Sent(EncodeLengthAnswer(AnswerKind::kBytes, kMaxAnswerBytes).substr(1) + "abc");
  std::string answer;
  Incoming::Ahead ahead;
  Incoming in(fd.get(), &ahead);
  const AnswerRead read = ReadBytesAnswer(in, absl::Now() + absl::Seconds(10), What, &answer);
  EXPECT_STATUS(read.status, kUnavailable, "reading an answer");
  EXPECT_FALSE(read.reusable);
  EXPECT_LE(answer.capacity(), size_t{2} << 20);
}

}  // namespace
}  // namespace bulk
}  // namespace tensorgrid
