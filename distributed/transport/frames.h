// The bulk port's wire formats: every request and answer as a typed header
// with its encoding and decoding. Nothing outside this file reads or writes a
// frame's bytes by offset. Integers are little-endian.
//
// A request opens with a 4-byte magic naming its kind:
//
//   TGB1  ticket fetch   magic, 16-byte ticket id
//         answer:        TicketAnswer (code, length), the tensor's bytes
//   TGR5  RecvBuf        magic, TensorRequest's fixed part, token,
//   TGV2  RecvTensor       addressee, key (a collective chunk's key, or a
//                          rendezvous key; RecvTensor adds the step id)
//   TGW2  RecvTensors    as TGV2, with a block of keys (EncodeKeys) in
//                          place of the key: several tensors of one step
//   TGC2  call           magic, CallRequest's fixed part, token, addressee,
//                          method, the request's bytes
//
// The answer to TGR5, TGV2 and TGC2 opens with an AnswerKind byte:
//
//   kTensor      TensorHeader (dtype, dims, length), the content
//   kInPlace     TensorHeader, then InPlaceLocation: where the content lies
//                in the server's memory and a nonce proving which process
//                that is. The client copies it (process_vm_readv), finds
//                the nonce still there (the server wipes it before it lets
//                the chunk go), and says kCopiedVerdict, answered by
//                nothing; or says kSendVerdict and the content follows on
//                the connection
//   kProto       length (8), a serialized TensorProto (RecvTensor of strings)
//   kBytes       length (8), a call's answer
//   kError       ErrorHeader (code, body length), the body (EncodeError):
//                final, the request may have run
//   kNotServed   as kError, for a request refused unread: the client may
//                send it over gRPC instead
//   kStillWorking  not an answer: a beat, sent while the handler runs
//   kItem        TGW2's answers: index (4), then that key's whole answer
//                (kTensor, kInPlace, kProto or kError), one per key in the
//                order the tensors come; a refusal of the whole request is
//                a plain kNotServed or kError instead, before any item
//
// The addressee is the task the client means (empty: any). A server of
// another task refuses the request unread, so that a port a restarted task
// gave up and another task took is never served by the wrong one.
#ifndef TENSORGRID_DISTRIBUTED_TRANSPORT_FRAMES_H_
#define TENSORGRID_DISTRIBUTED_TRANSPORT_FRAMES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tensorgrid {

// The bytes of a ticket id.
constexpr size_t kBulkTicketBytes = 16;
// The longest a bulk port's server waits for a call's or a chunk's answer.
constexpr absl::Duration kBulkMaxWait = absl::Hours(1);
// The calls tensorgrid's services serve on their bulk port, by the name of
// their gRPC method: a serialized request in, its response out. The worker
// service serves RunGraph (GrpcWorkerService), the master service a
// session's steps (GrpcMasterService).
inline constexpr char kBulkRunGraph[] = "RunGraph";
inline constexpr char kBulkRunStep[] = "RunStep";
inline constexpr char kBulkRunCallable[] = "RunCallable";

namespace bulk {

// ---- limits

constexpr size_t kNonceBytes = 16;
constexpr uint32_t kMaxTokenBytes = 4096;
constexpr uint32_t kMaxKeyBytes = 4096;  // also the addressee's
constexpr uint32_t kMaxMethodBytes = 256;
constexpr uint32_t kMaxRank = 64;
// The largest answer (a call's bytes, a TensorProto) a client accepts.
constexpr uint64_t kMaxAnswerBytes = (uint64_t{1} << 31) - 1;
// The largest error body; longer messages are cut.
constexpr uint64_t kMaxErrorBytes = 1 << 16;

// `bytes` random bytes (getrandom); empty when the kernel gives none.
std::string RandomBytes(size_t bytes);

// ---- requests

constexpr size_t kMagicBytes = 4;
enum class RequestKind { kTicket, kRecvBuf, kRecvTensor, kRecvTensors, kCall };
// The kind a request's first kMagicBytes name; nullopt for garbage.
std::optional<RequestKind> RequestKindOf(absl::string_view magic);

// TGB1: the ticket id after the magic.
std::string EncodeTicketRequest(absl::string_view id);

// TGR5 (RecvBuf), TGV2 (RecvTensor) and TGW2 (RecvTensors).
struct TensorRequest {
  bool rendezvous = false;  // RecvTensor: `key` is a rendezvous key of step `step_id`
  bool batch = false;       // RecvTensors (with `rendezvous`): `key` is EncodeKeys' block
  std::string token;
  std::string addressee;
  std::string key;
  bool may_read_in_place = false;  // the client may copy the content itself
  uint64_t wait_ms = 0;            // how long the server is asked to wait
  int64_t step_id = 0;

  std::string Encode() const;  // magic included
};
// The fixed part after the magic: lengths, flags, the wait, the step id.
struct TensorRequestFixed {
  static constexpr size_t kMaxBytes = 32;
  static size_t Bytes(bool rendezvous) { return rendezvous ? kMaxBytes : 24; }
  static TensorRequestFixed Decode(const char* bytes, bool rendezvous);
  uint32_t token_bytes = 0;
  uint32_t addressee_bytes = 0;
  uint32_t key_bytes = 0;
  bool may_read_in_place = false;
  uint64_t wait_ms = 0;
  int64_t step_id = 0;
};

// The most keys one RecvTensors asks for, and the largest block of them.
constexpr uint32_t kMaxBatchKeys = 4096;
constexpr uint32_t kMaxKeysBlockBytes = 1 << 20;
// RecvTensors' keys: their count (4), then each key's length (4) and bytes.
std::string EncodeKeys(const std::vector<std::string>& keys);
// The keys of a block; nullopt unless it holds 1 to kMaxBatchKeys keys of 1
// to kMaxKeyBytes bytes each and nothing more.
std::optional<std::vector<std::string>> DecodeKeys(absl::string_view block);
// `keys` cut, in order, into runs [first, second) that each fit one
// RecvTensors (at most kMaxBatchKeys keys in a block of at most
// kMaxKeysBlockBytes).
std::vector<std::pair<size_t, size_t>> BatchesOf(const std::vector<std::string>& keys);

// TGC2: a call of `method` with `request`'s bytes, magic included.
std::string EncodeCallRequest(absl::string_view token, absl::string_view addressee,
                              absl::string_view method, uint64_t wait_ms,
                              absl::string_view request);
struct CallRequestFixed {
  static constexpr size_t kBytes = 28;
  static CallRequestFixed Decode(const char* bytes);
  uint32_t token_bytes = 0;
  uint32_t addressee_bytes = 0;
  uint32_t method_bytes = 0;
  uint64_t wait_ms = 0;
  uint64_t request_bytes = 0;
};

// The wait a request asks for, in whole milliseconds until `deadline`.
uint64_t WaitMs(absl::Time deadline);
// The wait a server grants: `wait_ms`, capped at kBulkMaxWait.
absl::Duration GrantedWait(uint64_t wait_ms);

// ---- answers

enum class AnswerKind : uint8_t {
  kTensor = 0,
  kError = 2,
  kBytes = 3,
  kNotServed = 4,
  kInPlace = 5,
  kProto = 6,
  kStillWorking = 7,
  kItem = 8,
};
// kItem's index, after its kind byte.
constexpr size_t kItemIndexBytes = 4;
std::string EncodeItemHead(uint32_t index);
uint32_t DecodeItemIndex(const char* bytes);
// What a client says after an in-place answer.
constexpr char kCopiedVerdict = 'D';
constexpr char kSendVerdict = 'S';

// The answer to a ticket fetch: a code and the length of the bytes after it.
struct TicketAnswer {
  enum Code : uint8_t { kOk = 0, kUnknownTicket = 1 };
  static constexpr size_t kBytes = 1 + 8;
  void EncodeTo(char* out) const;
  static TicketAnswer Decode(const char* bytes);
  uint8_t code = kOk;
  uint64_t length = 0;
};

// kError and kNotServed: the kind byte, ErrorHeader, the body. The body is
// the message and then each payload (what marks an error as derived from
// another, say); together at most kMaxErrorBytes.
std::string EncodeError(const absl::Status& status, AnswerKind kind = AnswerKind::kError);
struct ErrorHeader {
  static constexpr size_t kBytes = 8;
  static ErrorHeader Decode(const char* bytes);
  uint32_t code = 0;
  uint32_t body_bytes = 0;
};
// The status an error's code and body describe; DataLoss naming `what` when
// the body does not parse.
absl::Status DecodeError(uint32_t code, absl::string_view body, absl::string_view what);

// kBytes and kProto: the kind byte and the length that follows it.
std::string EncodeLengthAnswer(AnswerKind kind, uint64_t length);
constexpr size_t kLengthBytes = 8;
uint64_t DecodeLength(const char* bytes);

// kTensor and kInPlace: after the kind byte, dtype (4), rank (4), each
// dimension (8), the content's length (8).
struct TensorHeader {
  // The bytes of the rank and dtype, then of the rest once the rank is known.
  static constexpr size_t kRankBytes = 8;
  static size_t RestBytes(uint32_t rank) { return 8 * size_t{rank} + 8; }
  void AppendTo(std::string* out) const;
  // DecodeRank reads dtype and rank; DecodeRest the dimensions and length.
  static TensorHeader DecodeRank(const char* bytes);
  void DecodeRest(const char* bytes);
  uint32_t dtype = 0;
  uint32_t rank = 0;
  std::vector<int64_t> dims;
  uint64_t length = 0;
};

// After an in-place answer's TensorHeader: where the content lies in the
// server (process `pid`, `address`) and a nonce of this answer's own, at
// `nonce_address` in that process.
struct InPlaceLocation {
  static constexpr size_t kBytes = 8 * 3 + kNonceBytes;
  void AppendTo(std::string* out) const;
  static InPlaceLocation Decode(const char* bytes);
  uint64_t pid = 0;
  uint64_t address = 0;
  uint64_t nonce_address = 0;
  std::string nonce;
};

// The whole size (header and body) of the answer whose first bytes are
// `head`, when they say it; nullopt when more bytes are needed; kUnknownSize
// for an answer whose size only its reader learns (in place, a beat) or that
// is over kMaxAnswerBytes; 1 for garbage (its reader refuses it at once).
constexpr uint64_t kUnknownSize = UINT64_MAX;
std::optional<uint64_t> AnswerSize(absl::string_view head);
// An in-place answer (its kind byte first) whose first bytes are `head`:
// the bytes it takes on the connection (kind byte, TensorHeader,
// InPlaceLocation) when its content, copied out of the server's memory, is
// at most `max_copy` bytes; kUnknownSize when the copy is larger; else as
// AnswerSize (nullopt: more bytes needed; 1: garbage).
std::optional<uint64_t> InPlaceAnswerSize(absl::string_view head, uint64_t max_copy);
// Enough bytes of any answer's head for AnswerSize.
constexpr size_t kLongestAnswerHead = 1 + kItemIndexBytes + 1 + 4 + 4 + 8 * kMaxRank + 8;

}  // namespace bulk
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_TRANSPORT_FRAMES_H_
