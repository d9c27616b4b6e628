// The bulk port's client side (distributed/transport/answer_reader.h): the
// bytes a server sends back, read as BulkClient::ReadAnswer reads them. A
// client trusts its peer no more than a server does: whatever arrives is
// either an answer or DataLoss (Unavailable when it stops short), never a
// crash, an allocation the header merely claims, or a read out of step.
//
// Input: one byte says what the request was (a call, a RecvTensor, a RecvBuf
// into a chunk of its own, a RecvTensors of 4 keys, whether reading in place
// was offered); the rest is
// what the server sends, over a socketpair, before it hangs up.
//
// Besides "no crash", an answer read whole and left reusable must have taken
// exactly as many bytes as AnswerSize (which the client uses to decide
// whether an answer is all there) said it would.
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/framework/tensor.h"
#include "distributed/transport/answer_reader.h"
#include "distributed/transport/frames.h"
#include "distributed/transport/socket.h"
#include "tests/fuzz/fuzz_util.h"

namespace tensorgrid {
namespace {

using bulk::AnswerKind;
using bulk::AnswerRead;

enum class Request { kCall, kRecvTensor, kRecvBuf, kRecvTensors };
// The keys a fuzzed RecvTensors asked for.
constexpr size_t kItemKeys = 4;

// Streams up to this size fit in a socketpair's buffer at once.
constexpr size_t kWholeStreamBytes = 64 << 10;

// The read of one answer, as BulkClient::ReadAnswer dispatches on its kind.
AnswerRead ReadOne(bulk::Incoming& in, AnswerKind kind, Request request, bool may_read_in_place,
                   const Tensor* into, Tensor* out, std::string* answer) {
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  auto what = [] { return std::string("a fuzzed request from the bulk port h:1"); };
  std::atomic<bool> in_place_refused{false};
  if (kind == AnswerKind::kError || kind == AnswerKind::kNotServed) {
    AnswerRead read = bulk::ReadErrorAnswer(in, kind, deadline, what);
    if (read.from_server && read.status.ok()) fuzz::Fail("an error answer read as OK");
    return read;
  }
  if (request == Request::kRecvTensors) {
    // Items only, read as BulkClient::ReadItem reads each.
    if (kind != AnswerKind::kItem) return bulk::UnexpectedAnswer(kind, what);
    std::vector<Tensor> outs(kItemKeys);
    int index = -1;
    AnswerRead read =
        bulk::ReadItemAnswer(in, deadline, what, may_read_in_place,
                             std::vector<bool>(kItemKeys, false), &outs, &in_place_refused, &index);
    if (read.status.ok() && (index < 0 || !outs[index].IsInitialized())) {
      fuzz::Fail("an item read as OK without its tensor");
    }
    if (index >= 0) *out = outs[index];
    return read;
  }
  if (request == Request::kCall) {
    return kind == AnswerKind::kBytes ? bulk::ReadBytesAnswer(in, deadline, what, answer)
                                      : bulk::UnexpectedAnswer(kind, what);
  }
  if (kind == AnswerKind::kProto) {
    if (request != Request::kRecvTensor) return AnswerRead{absl::DataLossError("proto to RecvBuf")};
    return bulk::ReadProtoAnswer(in, deadline, what, out);
  }
  if (kind == AnswerKind::kInPlace && !may_read_in_place) {
    return AnswerRead{absl::DataLossError("in place, unasked")};
  }
  if (kind == AnswerKind::kTensor || kind == AnswerKind::kInPlace) {
    return bulk::ReadTensorAnswer(in, kind == AnswerKind::kInPlace, deadline, what, into, out,
                                  &in_place_refused);
  }
  return bulk::UnexpectedAnswer(kind, what);
}

void FuzzAnswer(uint8_t flags, const std::string& stream) {
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) fuzz::Fail("socketpair");
  bulk::UniqueFd server(ends[0]), client(ends[1]);
  // The "server" sends the stream and hangs up; a thread, since the stream
  // may be more than the socket buffer holds.
  std::thread sender([&server, &stream] {
    bulk::WriteFull(server.get(), stream);
    shutdown(server.get(), SHUT_WR);
  });

  const Request request = static_cast<Request>(flags & 3);
  const bool may_read_in_place = (flags & 4) != 0;
  Tensor into;
  if (request == Request::kRecvBuf && (flags & 8) != 0) into = Tensor(DT_FLOAT, TensorShape({4}));

  // Beats first (kStillWorking), then the answer's kind byte.
  size_t beats = 0;
  while (beats < stream.size() &&
         static_cast<AnswerKind>(stream[beats]) == AnswerKind::kStillWorking) {
    ++beats;
  }
  const std::optional<uint64_t> size =
      bulk::AnswerSize(absl::string_view(stream).substr(beats, bulk::kLongestAnswerHead));
  char kind_byte = 0;
  bool have_kind = false;
  // Read as BulkClient reads: through the connection's bytes received ahead.
  bulk::Incoming::Ahead ahead;
  bulk::Incoming in(client.get(), &ahead);
  while (in.ReadFull(&kind_byte, 1, absl::Now() + absl::Seconds(5)) == 1) {
    if (static_cast<AnswerKind>(kind_byte) != AnswerKind::kStillWorking) {
      have_kind = true;
      break;
    }
  }
  if (have_kind) {
    Tensor out;
    std::string answer;
    const AnswerRead read = ReadOne(in, static_cast<AnswerKind>(kind_byte), request,
                                    may_read_in_place, &into, &out, &answer);
    if (read.status.ok() && request != Request::kCall && !out.IsInitialized()) {
      fuzz::Fail("a tensor answer read as OK without a tensor");
    }
    if (!read.status.ok() && !read.from_server) {
      fuzz::ExpectError(read.status,
                        {absl::StatusCode::kDataLoss, absl::StatusCode::kUnavailable,
                         absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kInvalidArgument,
                         absl::StatusCode::kResourceExhausted},
                        "reading an answer");
    }
    // (Only for a stream the socket holds whole: the sender is done.)
    if (read.reusable && size.has_value() && *size != bulk::kUnknownSize && *size != 1 &&
        stream.size() <= kWholeStreamBytes) {
      // What the reader took: everything sent but what is still unread,
      // in the socket or received ahead.
      int unread = 0;
      sender.join();
      if (ioctl(client.get(), FIONREAD, &unread) != 0) fuzz::Fail("FIONREAD");
      const uint64_t taken =
          stream.size() - beats - static_cast<uint64_t>(unread) - in.ahead().size();
      if (taken != *size) {
        fuzz::Fail(absl::StrCat("AnswerSize said ", *size, " bytes, the reader took ", taken, " (",
                                read.status.ToString(), ")"));
      }
      return;
    }
  }
  client.reset();  // a sender blocked on a full buffer fails now
  sender.join();
}

}  // namespace
}  // namespace tensorgrid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensorgrid::fuzz::Init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensorgrid::fuzz::Input in(data, size);
  const uint8_t flags = in.Byte();
  tensorgrid::FuzzAnswer(flags, in.Rest());
  return 0;
}
