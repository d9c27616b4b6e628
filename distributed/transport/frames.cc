#include "distributed/transport/frames.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/cord.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace bulk {
namespace {

constexpr char kTicketMagic[kMagicBytes] = {'T', 'G', 'B', '1'};
constexpr char kRecvBufMagic[kMagicBytes] = {'T', 'G', 'R', '5'};
constexpr char kRecvTensorMagic[kMagicBytes] = {'T', 'G', 'V', '2'};
constexpr char kRecvTensorsMagic[kMagicBytes] = {'T', 'G', 'W', '2'};
constexpr char kCallMagic[kMagicBytes] = {'T', 'G', 'C', '2'};
constexpr uint32_t kMayReadInPlace = 1;  // TensorRequest's flags

// Little-endian integers of `bytes` bytes.
void Put(std::string* out, uint64_t n, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}
uint64_t Get(const char* in, int bytes) {
  uint64_t n = 0;
  for (int i = 0; i < bytes; ++i) {
    n |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  }
  return n;
}
uint32_t Get32(const char* in) { return static_cast<uint32_t>(Get(in, 4)); }
uint64_t Get64(const char* in) { return Get(in, 8); }

}  // namespace

std::string RandomBytes(size_t bytes) {
  std::string id(bytes, '\0');
  size_t got = 0;
  while (got < id.size()) {
    const ssize_t r = getrandom(id.data() + got, id.size() - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return "";
    }
    got += static_cast<size_t>(r);
  }
  return id;
}

std::optional<RequestKind> RequestKindOf(absl::string_view magic) {
  if (magic.size() != kMagicBytes) return std::nullopt;
  if (std::memcmp(magic.data(), kCallMagic, kMagicBytes) == 0) return RequestKind::kCall;
  if (std::memcmp(magic.data(), kRecvBufMagic, kMagicBytes) == 0) return RequestKind::kRecvBuf;
  if (std::memcmp(magic.data(), kRecvTensorMagic, kMagicBytes) == 0) {
    return RequestKind::kRecvTensor;
  }
  if (std::memcmp(magic.data(), kRecvTensorsMagic, kMagicBytes) == 0) {
    return RequestKind::kRecvTensors;
  }
  if (std::memcmp(magic.data(), kTicketMagic, kMagicBytes) == 0) return RequestKind::kTicket;
  return std::nullopt;
}

std::string EncodeTicketRequest(absl::string_view id) {
  std::string out(kTicketMagic, kMagicBytes);
  out.append(id.data(), id.size());
  return out;
}

std::string TensorRequest::Encode() const {
  std::string out(!rendezvous ? kRecvBufMagic : batch ? kRecvTensorsMagic : kRecvTensorMagic,
                  kMagicBytes);
  out.reserve(kMagicBytes + TensorRequestFixed::Bytes(rendezvous) + token.size() +
              addressee.size() + key.size());
  Put(&out, token.size(), 4);
  Put(&out, addressee.size(), 4);
  Put(&out, key.size(), 4);
  Put(&out, may_read_in_place ? kMayReadInPlace : 0, 4);
  Put(&out, wait_ms, 8);
  if (rendezvous) Put(&out, static_cast<uint64_t>(step_id), 8);
  out += token;
  out += addressee;
  out += key;
  return out;
}

TensorRequestFixed TensorRequestFixed::Decode(const char* bytes, bool rendezvous) {
  TensorRequestFixed fixed;
  fixed.token_bytes = Get32(bytes);
  fixed.addressee_bytes = Get32(bytes + 4);
  fixed.key_bytes = Get32(bytes + 8);
  fixed.may_read_in_place = (Get32(bytes + 12) & kMayReadInPlace) != 0;
  fixed.wait_ms = Get64(bytes + 16);
  if (rendezvous) fixed.step_id = static_cast<int64_t>(Get64(bytes + 24));
  return fixed;
}

std::string EncodeKeys(const std::vector<std::string>& keys) {
  std::string out;
  Put(&out, keys.size(), 4);
  for (const std::string& key : keys) {
    Put(&out, key.size(), 4);
    out += key;
  }
  return out;
}

std::optional<std::vector<std::string>> DecodeKeys(absl::string_view block) {
  if (block.size() < 4 || block.size() > kMaxKeysBlockBytes) return std::nullopt;
  const uint32_t count = Get32(block.data());
  if (count == 0 || count > kMaxBatchKeys) return std::nullopt;
  block.remove_prefix(4);
  std::vector<std::string> keys;
  keys.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (block.size() < 4) return std::nullopt;
    const uint32_t bytes = Get32(block.data());
    block.remove_prefix(4);
    if (bytes == 0 || bytes > kMaxKeyBytes || bytes > block.size()) return std::nullopt;
    keys.emplace_back(block.substr(0, bytes));
    block.remove_prefix(bytes);
  }
  if (!block.empty()) return std::nullopt;
  return keys;
}

std::vector<std::pair<size_t, size_t>> BatchesOf(const std::vector<std::string>& keys) {
  std::vector<std::pair<size_t, size_t>> runs;
  size_t first = 0, block = 4;
  for (size_t i = 0; i < keys.size(); ++i) {
    const size_t bytes = 4 + keys[i].size();
    if (i > first && (i - first == kMaxBatchKeys || block + bytes > kMaxKeysBlockBytes)) {
      runs.emplace_back(first, i);
      first = i;
      block = 4;
    }
    block += bytes;
  }
  if (first < keys.size()) runs.emplace_back(first, keys.size());
  return runs;
}

std::string EncodeItemHead(uint32_t index) {
  std::string out(1, static_cast<char>(AnswerKind::kItem));
  Put(&out, index, 4);
  return out;
}

uint32_t DecodeItemIndex(const char* bytes) { return Get32(bytes); }

std::string EncodeCallRequest(absl::string_view token, absl::string_view addressee,
                              absl::string_view method, uint64_t wait_ms,
                              absl::string_view request) {
  std::string out(kCallMagic, kMagicBytes);
  out.reserve(kMagicBytes + CallRequestFixed::kBytes + token.size() + addressee.size() +
              method.size() + request.size());
  Put(&out, token.size(), 4);
  Put(&out, addressee.size(), 4);
  Put(&out, method.size(), 4);
  Put(&out, wait_ms, 8);
  Put(&out, request.size(), 8);
  out.append(token.data(), token.size());
  out.append(addressee.data(), addressee.size());
  out.append(method.data(), method.size());
  out.append(request.data(), request.size());
  return out;
}

CallRequestFixed CallRequestFixed::Decode(const char* bytes) {
  CallRequestFixed fixed;
  fixed.token_bytes = Get32(bytes);
  fixed.addressee_bytes = Get32(bytes + 4);
  fixed.method_bytes = Get32(bytes + 8);
  fixed.wait_ms = Get64(bytes + 12);
  fixed.request_bytes = Get64(bytes + 20);
  return fixed;
}

uint64_t WaitMs(absl::Time deadline) {
  return static_cast<uint64_t>(
      std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
}

absl::Duration GrantedWait(uint64_t wait_ms) {
  return std::min(
      kBulkMaxWait,
      absl::Milliseconds(static_cast<int64_t>(std::min<uint64_t>(wait_ms, INT64_MAX / 2))));
}

void TicketAnswer::EncodeTo(char* out) const {
  out[0] = static_cast<char>(code);
  for (int i = 0; i < 8; ++i) out[1 + i] = static_cast<char>((length >> (8 * i)) & 0xff);
}

TicketAnswer TicketAnswer::Decode(const char* bytes) {
  TicketAnswer answer;
  answer.code = static_cast<uint8_t>(bytes[0]);
  answer.length = Get64(bytes + 1);
  return answer;
}

std::string EncodeError(const absl::Status& status, AnswerKind kind) {
  std::string body;
  const absl::string_view message = status.message().substr(0, kMaxErrorBytes / 2);
  Put(&body, message.size(), 4);
  body.append(message.data(), message.size());
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& value) {
    const std::string bytes(value);
    if (body.size() + url.size() + bytes.size() + 8 > kMaxErrorBytes) return;
    Put(&body, url.size(), 4);
    body.append(url.data(), url.size());
    Put(&body, bytes.size(), 4);
    body += bytes;
  });
  std::string answer(1, static_cast<char>(kind));
  Put(&answer, static_cast<uint64_t>(status.code()), 4);
  Put(&answer, body.size(), 4);
  return answer + body;
}

ErrorHeader ErrorHeader::Decode(const char* bytes) {
  ErrorHeader header;
  header.code = Get32(bytes);
  header.body_bytes = Get32(bytes + 4);
  return header;
}

absl::Status DecodeError(uint32_t code, absl::string_view body, absl::string_view what) {
  auto take = [&body](absl::string_view* out) {
    if (body.size() < 4) return false;
    const uint64_t n = Get32(body.data());
    if (body.size() - 4 < n) return false;
    *out = body.substr(4, n);
    body.remove_prefix(4 + n);
    return true;
  };
  absl::string_view message;
  if (!take(&message)) return errors::DataLoss(what, ": an error answer that does not parse");
  const absl::StatusCode status_code =
      code == 0 || code > 16 ? absl::StatusCode::kUnknown : static_cast<absl::StatusCode>(code);
  absl::Status status(status_code, message);
  absl::string_view url, value;
  while (!body.empty()) {
    if (!take(&url) || !take(&value)) {
      return errors::DataLoss(what, ": an error answer that does not parse");
    }
    status.SetPayload(url, absl::Cord(value));
  }
  return status;
}

std::string EncodeLengthAnswer(AnswerKind kind, uint64_t length) {
  std::string out(1, static_cast<char>(kind));
  Put(&out, length, 8);
  return out;
}

uint64_t DecodeLength(const char* bytes) { return Get64(bytes); }

void TensorHeader::AppendTo(std::string* out) const {
  Put(out, dtype, 4);
  Put(out, dims.size(), 4);
  for (int64_t d : dims) Put(out, static_cast<uint64_t>(d), 8);
  Put(out, length, 8);
}

TensorHeader TensorHeader::DecodeRank(const char* bytes) {
  TensorHeader header;
  header.dtype = Get32(bytes);
  header.rank = Get32(bytes + 4);
  return header;
}

void TensorHeader::DecodeRest(const char* bytes) {
  dims.resize(rank);
  for (uint32_t d = 0; d < rank; ++d) dims[d] = static_cast<int64_t>(Get64(bytes + 8 * d));
  length = Get64(bytes + 8 * size_t{rank});
}

void InPlaceLocation::AppendTo(std::string* out) const {
  Put(out, pid, 8);
  Put(out, address, 8);
  Put(out, nonce_address, 8);
  *out += nonce;
}

InPlaceLocation InPlaceLocation::Decode(const char* bytes) {
  InPlaceLocation where;
  where.pid = Get64(bytes);
  where.address = Get64(bytes + 8);
  where.nonce_address = Get64(bytes + 16);
  where.nonce.assign(bytes + 24, kNonceBytes);
  return where;
}

namespace {

constexpr uint64_t kGarbage = 1;  // its reader refuses it after the kind byte

// A kTensor or kInPlace answer's kind byte and TensorHeader at the start of
// `head`: their bytes, the content's length in `*length`; nullopt when more
// bytes are needed, kGarbage for a rank over kMaxRank.
std::optional<uint64_t> TensorHeadSize(absl::string_view head, uint64_t* length) {
  if (head.size() < 1 + TensorHeader::kRankBytes) return std::nullopt;
  const TensorHeader rank = TensorHeader::DecodeRank(head.data() + 1);
  if (rank.rank > kMaxRank) return kGarbage;
  const size_t header = 1 + TensorHeader::kRankBytes + TensorHeader::RestBytes(rank.rank);
  if (head.size() < header) return std::nullopt;
  *length = Get64(head.data() + header - 8);
  return header;
}

}  // namespace

std::optional<uint64_t> AnswerSize(absl::string_view head) {
  if (head.empty()) return std::nullopt;
  uint64_t header = 1 + 8;
  uint64_t length = 0;
  switch (static_cast<AnswerKind>(head[0])) {
    case AnswerKind::kBytes:
    case AnswerKind::kProto:
      if (head.size() < header) return std::nullopt;
      length = Get64(head.data() + 1);
      break;
    case AnswerKind::kError:
    case AnswerKind::kNotServed:
      if (head.size() < header) return std::nullopt;
      length = ErrorHeader::Decode(head.data() + 1).body_bytes;
      break;
    case AnswerKind::kInPlace:       // its copy is large
    case AnswerKind::kStillWorking:  // a beat: the answer may take long
      return kUnknownSize;
    case AnswerKind::kItem: {  // the item's own answer after its head
      constexpr size_t kHead = 1 + kItemIndexBytes;
      if (head.size() < kHead + 1) return std::nullopt;
      if (static_cast<AnswerKind>(head[kHead]) == AnswerKind::kItem) return kGarbage;
      const std::optional<uint64_t> inner = AnswerSize(head.substr(kHead));
      if (!inner || *inner == kUnknownSize || *inner == kGarbage) return inner;
      return kHead + *inner;
    }
    case AnswerKind::kTensor: {
      const std::optional<uint64_t> size = TensorHeadSize(head, &length);
      if (!size || *size == kGarbage) return size;
      header = *size;
      break;
    }
    default: return kGarbage;
  }
  if (length > kMaxAnswerBytes) return kUnknownSize;
  return header + length;
}

std::optional<uint64_t> InPlaceAnswerSize(absl::string_view head, uint64_t max_copy) {
  uint64_t length = 0;
  const std::optional<uint64_t> size = TensorHeadSize(head, &length);
  if (!size || *size == kGarbage) return size;
  return length > max_copy ? kUnknownSize : *size + InPlaceLocation::kBytes;
}

}  // namespace bulk
}  // namespace tensorgrid
