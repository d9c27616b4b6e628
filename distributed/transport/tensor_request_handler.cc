// BulkServer's handler of direct tensor requests: RecvBuf (a collective
// chunk by key) and RecvTensor (a step's tensor by rendezvous key). Waits
// for the tensor and answers it: its bytes on the connection, in place for a
// client on this machine that may copy it itself (in_place.h), or a
// TensorProto for a tensor of strings.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "core/framework/tensor_codec.h"
#include "core/framework/types.h"
#include "core/platform/status.h"
#include "distributed/transport/in_place.h"
#include "distributed/transport/server_state.h"
#include "distributed/transport/socket.h"

namespace tensorgrid {
namespace {

// How long a server holds a chunk for a client copying it in place.
constexpr absl::Duration kInPlaceVerdictTimeout = absl::Seconds(60);

// A tensor of strings (or another dtype that is not plain bytes) as a
// TensorProto answer; ResourceExhausted over the answer limit.
absl::StatusOr<std::string> ProtoAnswer(const Tensor& tensor, absl::string_view what) {
  TensorProto proto;
  TensorToProto(tensor, &proto);
  const size_t bytes = proto.ByteSizeLong();
  std::string answer = bulk::EncodeLengthAnswer(bulk::AnswerKind::kProto, bytes);
  if (bytes > bulk::kMaxAnswerBytes || !proto.AppendToString(&answer)) {
    return errors::ResourceExhausted(what, ": ", DataTypeString(tensor.dtype()), " ",
                                     tensor.shape().DebugString(), " makes an answer of ", bytes,
                                     " bytes, over the limit of ", bulk::kMaxAnswerBytes);
  }
  return answer;
}

// Writes what `gathered` holds (if anything), then empties it.
bool Flush(int fd, std::string* gathered) {
  if (gathered == nullptr || gathered->empty()) return true;
  const bool sent = bulk::WriteFull(fd, *gathered);
  gathered->clear();
  return sent;
}

}  // namespace

bool BulkServer::State::OpenTensorRequest(bulk::Incoming& in, bulk::RequestKind kind,
                                          absl::Time header_deadline, OpenedTensorRequest* opened) {
  const int fd = in.fd();
  const bool rendezvous = kind != bulk::RequestKind::kRecvBuf;
  const bool batch = kind == bulk::RequestKind::kRecvTensors;
  char fixed_bytes[bulk::TensorRequestFixed::kMaxBytes];
  const size_t fixed_size = bulk::TensorRequestFixed::Bytes(rendezvous);
  if (in.ReadFull(fixed_bytes, fixed_size, header_deadline) != fixed_size) return false;
  bulk::TensorRequestFixed* const fixed = &opened->fixed;
  *fixed = bulk::TensorRequestFixed::Decode(fixed_bytes, rendezvous);
  const char* const what = batch ? "RecvTensors" : rendezvous ? "RecvTensor" : "RecvBuf";
  std::string addressee;
  if (!ReadNames(in, fixed->token_bytes, fixed->addressee_bytes, fixed->key_bytes,
                 batch ? bulk::kMaxKeysBlockBytes : bulk::kMaxKeyBytes, header_deadline, what,
                 &addressee, &opened->name)) {
    return false;
  }
  // Before looking at `stopped`: either Stop began (refused below, unread)
  // or Stop will leave this connection open for the answer.
  opened->answering.emplace(this, fd);
  bool stopping;
  {
    absl::MutexLock lock(&mu);
    if (rendezvous) {
      opened->recv_tensor_fn = recv_tensor;
    } else {
      opened->recv_buf_fn = recv_buf;
    }
    stopping = stopped;
  }
  absl::Status refused = CheckAddressee(addressee, what);
  if (refused.ok() && (rendezvous ? !opened->recv_tensor_fn : !opened->recv_buf_fn)) {
    refused = errors::Unimplemented("this bulk port serves no ", rendezvous ? "RecvTensor" : what);
  }
  if (refused.ok() && stopping) refused = errors::Unavailable("the bulk port is stopping");
  if (!refused.ok()) {
    bulk::Refuse(fd, refused);
    return false;
  }
  return true;
}

bool BulkServer::State::ServeTensorRequest(bulk::Incoming& in, bool rendezvous,
                                           absl::Time header_deadline) {
  const int fd = in.fd();
  OpenedTensorRequest opened;
  const bulk::RequestKind kind =
      rendezvous ? bulk::RequestKind::kRecvTensor : bulk::RequestKind::kRecvBuf;
  if (!OpenTensorRequest(in, kind, header_deadline, &opened)) return false;
  const bulk::TensorRequestFixed& fixed = opened.fixed;
  const std::string& key = opened.name;
  auto pending = std::make_shared<Pending>();
  const absl::Duration wait = bulk::GrantedWait(fixed.wait_ms);
  // A rendezvous has no deadline of its own: the wait's end is the answer,
  // a little before the client's (as gRPC's RecvTensor answers), so that
  // ours, which names the key and step, arrives first.
  const absl::Time deadline =
      absl::Now() + wait -
      (rendezvous ? std::min(absl::Milliseconds(100), wait / 10) : absl::ZeroDuration());
  auto settle = [pending](absl::Status s) { pending->Settle(std::move(s)); };
  if (rendezvous) {
    opened.recv_tensor_fn(fixed.step_id, key, deadline, &pending->tensor, &pending->cancellation,
                          std::move(settle));
  } else {
    opened.recv_buf_fn(key, deadline, &pending->tensor, &pending->cancellation, std::move(settle));
  }
  const std::string what = rendezvous
                               ? absl::StrCat("RecvTensor of '", key, "' for step ", fixed.step_id)
                               : absl::StrCat("RecvBuf of '", key, "'");
  absl::Status status = Await(*pending, fd, deadline, wait, what,
                              rendezvous ? absl::ZeroDuration() : bulk::kHandlerGrace);
  opened.answering->Writing();
  return WriteTensorAnswer(in, std::move(status), pending->tensor, rendezvous,
                           fixed.may_read_in_place, what, "", nullptr);
}

bool BulkServer::State::WriteTensorAnswer(bulk::Incoming& in, absl::Status status,
                                          const Tensor& given, bool rendezvous,
                                          bool may_read_in_place, const std::string& what,
                                          absl::string_view prefix, std::string* gathered) {
  const int fd = in.fd();
  // A small answer joins `*gathered`; anything else goes after it.
  auto send = [&](const std::string& answer) {
    if (gathered != nullptr && answer.size() < bulk::kInPlaceMinBytes) {
      *gathered += answer;
      return true;
    }
    return Flush(fd, gathered) && bulk::WriteFull(fd, answer);
  };
  Tensor tensor;
  if (status.ok()) tensor = given;
  if (status.ok() && rendezvous && tensor.IsInitialized() && DataTypeIsObject(tensor.dtype())) {
    // Strings and the like are not bytes: they cross as a TensorProto.
    absl::StatusOr<std::string> answer = ProtoAnswer(tensor, what);
    if (answer.ok()) {
      absl::MutexLock lock(&mu);
      ++fetches;
    }
    return send(absl::StrCat(prefix, answer.ok() ? *answer : bulk::EncodeError(answer.status())));
  }
  if (status.ok() && (!tensor.IsInitialized() || DataTypeIsObject(tensor.dtype()) ||
                      tensor.dims() > static_cast<int>(bulk::kMaxRank))) {
    status = errors::Internal(what, ": the answer is not a plain tensor");
  }
  if (!status.ok()) return send(absl::StrCat(prefix, bulk::EncodeError(status)));
  // A nonce of this answer's own proves to the client that the process it
  // reads is this one (process ids are per namespace; a process forked from
  // this one earlier does not have it).
  const absl::string_view bytes(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
  // (Made only for an answer that may go in place: a syscall less for small ones.)
  std::string nonce = may_read_in_place && bytes.size() >= bulk::kInPlaceMinBytes
                          ? bulk::RandomBytes(bulk::kNonceBytes)
                          : "";
  const bool in_place = nonce.size() == bulk::kNonceBytes;
  std::string header(prefix);
  header.push_back(
      static_cast<char>(in_place ? bulk::AnswerKind::kInPlace : bulk::AnswerKind::kTensor));
  bulk::TensorHeader shape;
  shape.dtype = static_cast<uint32_t>(tensor.dtype());
  shape.dims.assign(tensor.shape().dim_sizes().begin(), tensor.shape().dim_sizes().end());
  shape.length = bytes.size();
  shape.AppendTo(&header);
  if (in_place) {
    bulk::InPlaceLocation where;
    where.pid = static_cast<uint64_t>(pid);
    where.address = reinterpret_cast<uintptr_t>(bytes.data());
    where.nonce_address = reinterpret_cast<uintptr_t>(nonce.data());
    where.nonce = nonce;
    where.AppendTo(&header);
  }
  {
    absl::MutexLock lock(&mu);  // counted before the client can see the bytes
    ++fetches;
  }
  if (!in_place && gathered != nullptr && header.size() + bytes.size() < bulk::kInPlaceMinBytes) {
    *gathered += header;
    gathered->append(bytes.data(), bytes.size());
    return true;
  }
  if (!Flush(fd, gathered)) return false;
  if (!in_place) {
    iovec iov[2] = {{header.data(), header.size()},
                    {const_cast<char*>(bytes.data()), bytes.size()}};
    return bulk::WriteFull(fd, iov, bytes.empty() ? 1 : 2);
  }
  // `tensor` holds the chunk until the client says it has copied it. The
  // nonce is wiped first, however this ends: the client trusts its copy
  // only if it still finds the nonce after copying (in_place.h), so it
  // needs no word back.
  absl::Cleanup wipe = [&nonce] { bulk::WipeNonce(&nonce); };
  // Counted before the client can go on (it does once it has copied), and
  // taken back unless it says it did.
  {
    absl::MutexLock lock(&mu);
    ++in_place_reads;
  }
  char verdict = 0;
  if (bulk::WriteFull(fd, header) &&
      in.ReadFull(&verdict, 1, absl::Now() + kInPlaceVerdictTimeout) == 1 &&
      verdict == bulk::kCopiedVerdict) {
    return true;
  }
  {
    absl::MutexLock lock(&mu);
    --in_place_reads;
  }
  if (verdict != bulk::kSendVerdict) return false;
  return bulk::WriteFull(fd, bytes);  // it could not: the bytes after all
}

bool BulkServer::State::ServeTensorsRequest(bulk::Incoming& in, absl::Time header_deadline) {
  const int fd = in.fd();
  OpenedTensorRequest opened;
  std::optional<std::vector<std::string>> keys;
  if (!OpenTensorRequest(in, bulk::RequestKind::kRecvTensors, header_deadline, &opened) ||
      !(keys = bulk::DecodeKeys(opened.name))) {
    return false;  // refused, or garbage
  }
  const bulk::TensorRequestFixed& fixed = opened.fixed;
  {
    absl::MutexLock lock(&mu);
    ++tensor_batches;
  }
  const int n = static_cast<int>(keys->size());
  const std::string what = absl::StrCat("RecvTensors of ", n, " tensors for step ", fixed.step_id);
  auto batch = std::make_shared<Pending>();
  batch->items.resize(n);
  const absl::Duration wait = bulk::GrantedWait(fixed.wait_ms);
  // As a RecvTensor's: each key's wait ends a little before the client's.
  const absl::Time deadline = absl::Now() + wait - std::min(absl::Milliseconds(100), wait / 10);
  for (int i = 0; i < n; ++i) {
    opened.recv_tensor_fn(fixed.step_id, (*keys)[i], deadline, &batch->items[i].tensor,
                          &batch->cancellation,
                          [batch, i](absl::Status s) { batch->SettleItem(i, std::move(s)); });
  }
  std::vector<bool> answered(n, false);
  int left = n;
  while (left > 0) {
    const absl::Status waited = Await(*batch, fd, deadline, wait, what, absl::ZeroDuration());
    std::deque<int> ready;
    {
      absl::MutexLock lock(&batch->mu);
      ready.swap(batch->settled);
      batch->done = false;
    }
    opened.answering->Writing();
    // The small answers that are ready go out together, in one write.
    std::string gathered;
    for (int i : ready) {
      if (answered[i]) continue;
      const Pending::Item& item = batch->items[i];
      // Withdrawn as the wait was given up: answered with why, below.
      if (!waited.ok() && absl::IsCancelled(item.status)) continue;
      answered[i] = true;
      --left;
      if (!WriteTensorAnswer(in, item.status, item.tensor, true, fixed.may_read_in_place, what,
                             bulk::EncodeItemHead(i), &gathered)) {
        batch->cancellation.StartCancel();  // the rest is not wanted any more
        return false;
      }
    }
    if (!Flush(fd, &gathered)) {
      batch->cancellation.StartCancel();
      return false;
    }
    if (waited.ok()) continue;
    // The wait is over (the deadline, Stop, the client hung up; Await has
    // cancelled what is left): whatever has not come gets why.
    if (absl::IsCancelled(waited)) return false;
    for (int i = 0; i < n; ++i) {
      if (answered[i]) continue;
      answered[i] = true;
      const absl::Status why =
          WithContext(waited, absl::StrCat("RecvTensor of '", (*keys)[i], "'"));
      if (!WriteTensorAnswer(in, why, Tensor(), true, false, what, bulk::EncodeItemHead(i),
                             &gathered)) {
        return false;
      }
    }
    return Flush(fd, &gathered);
  }
  return true;
}

}  // namespace tensorgrid
