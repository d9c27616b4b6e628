#include "distributed/transport/answer_reader.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/framework/tensor_codec.h"
#include "core/framework/types.h"
#include "core/platform/status.h"
#include "distributed/transport/in_place.h"
#include "distributed/transport/socket.h"

namespace tensorgrid {
namespace bulk {
namespace {

// A read or write that just failed: Unavailable, or DeadlineExceeded.
AnswerRead Broken(What what, absl::string_view doing) {
  return {IoFailure(absl::StrCat(what(), ": ", doing)), false};
}

// A malformed answer: DataLoss; the connection is out of step.
AnswerRead Malformed(absl::Status status) { return {std::move(status), false}; }

// The `length`-byte body after a header into `*out`, at most `max`; `of`
// names it in errors.
AnswerRead ReadBody(Incoming& in, uint64_t length, uint64_t max, absl::Time deadline, What what,
                    absl::string_view of, std::string* out) {
  if (length > max) return Malformed(errors::DataLoss(what(), ": ", of, " of ", length, " bytes"));
  // Grown as the bytes come: a header claiming up to 2 GiB costs only what
  // arrives (found by bulk_answers_fuzzer, which a 2 GiB allocation per
  // 9-byte answer slowed to a few runs a second).
  if (!in.ReadGrowing(length, out, deadline)) return Broken(what, absl::StrCat("reading ", of));
  return {absl::OkStatus(), true};
}

// A length-prefixed body (kBytes, kProto) into `*out`.
AnswerRead ReadLengthAndBody(Incoming& in, absl::Time deadline, What what, std::string* out) {
  char length[kLengthBytes];
  if (in.ReadFull(length, sizeof(length), deadline) != sizeof(length)) {
    return Broken(what, "reading the answer");
  }
  return ReadBody(in, DecodeLength(length), kMaxAnswerBytes, deadline, what, "an answer", out);
}

// The tensor a header describes, checked: a plain dtype, a valid shape, and
// a length that fits them.
absl::StatusOr<TensorShape> CheckedShape(const TensorHeader& header, What what) {
  const DataType dtype = static_cast<DataType>(header.dtype);
  if (!DataTypeIsSupported(dtype) || IsRefType(dtype) || DataTypeIsObject(dtype)) {
    return errors::DataLoss(what(), ": an answer of dtype ", header.dtype);
  }
  absl::StatusOr<TensorShape> shape = BuildTensorShape(header.dims);
  if (!shape.ok()) {
    return errors::DataLoss(what(), ": an answer of an invalid shape: ", shape.status().message());
  }
  const uint64_t elements = static_cast<uint64_t>(shape->num_elements());
  const uint64_t size = static_cast<uint64_t>(DataTypeSize(dtype));
  if ((size != 0 && elements > UINT64_MAX / size) || elements * size != header.length) {
    return errors::DataLoss(what(), ": ", header.length, " bytes for ", DataTypeString(dtype), " ",
                            shape->DebugString());
  }
  return shape;
}

}  // namespace

AnswerRead ReadErrorAnswer(Incoming& in, AnswerKind kind, absl::Time deadline, What what) {
  char fixed[ErrorHeader::kBytes];
  if (in.ReadFull(fixed, sizeof(fixed), deadline) != sizeof(fixed)) {
    return Broken(what, "reading the error");
  }
  const ErrorHeader header = ErrorHeader::Decode(fixed);
  std::string body;
  AnswerRead read =
      ReadBody(in, header.body_bytes, kMaxErrorBytes, deadline, what, "an error answer", &body);
  if (!read.status.ok()) return read;
  const absl::Status error = DecodeError(header.code, body, what());
  // The server hangs up after a refusal, as after a wrong token.
  read.reusable =
      kind != AnswerKind::kNotServed && !absl::IsUnauthenticated(error) && !absl::IsDataLoss(error);
  read.status = error;
  read.from_server = true;
  return read;
}

AnswerRead ReadBytesAnswer(Incoming& in, absl::Time deadline, What what, std::string* answer) {
  return ReadLengthAndBody(in, deadline, what, answer);
}

AnswerRead ReadProtoAnswer(Incoming& in, absl::Time deadline, What what, Tensor* out) {
  std::string body;
  AnswerRead read = ReadLengthAndBody(in, deadline, what, &body);
  if (!read.status.ok()) return read;
  TensorProto proto;
  const bool parsed = proto.ParseFromString(body);
  std::string().swap(body);  // not held beside the proto and the tensor
  absl::StatusOr<Tensor> tensor =
      parsed ? TensorFromProto(proto)
             : absl::StatusOr<Tensor>(errors::DataLoss("the answer is not a TensorProto"));
  if (!tensor.ok()) read.status = WithContext(tensor.status(), what());
  if (tensor.ok()) *out = *std::move(tensor);
  return read;  // the connection is at a boundary either way
}

AnswerRead UnexpectedAnswer(AnswerKind kind, What what) {
  return Malformed(
      errors::DataLoss(what(), ": an answer of kind ", static_cast<int>(kind), " to this request"));
}

AnswerRead ReadTensorAnswer(Incoming& in, bool in_place, absl::Time deadline, What what,
                            const Tensor* into, Tensor* out, std::atomic<bool>* in_place_refused) {
  char rank_bytes[TensorHeader::kRankBytes];
  if (in.ReadFull(rank_bytes, sizeof(rank_bytes), deadline) != sizeof(rank_bytes)) {
    return Broken(what, "reading the answer");
  }
  TensorHeader header = TensorHeader::DecodeRank(rank_bytes);
  if (header.rank > kMaxRank) {
    return Malformed(errors::DataLoss(what(), ": an answer of rank ", header.rank));
  }
  std::vector<char> rest(TensorHeader::RestBytes(header.rank));
  if (in.ReadFull(rest.data(), rest.size(), deadline) != rest.size()) {
    return Broken(what, "reading the answer");
  }
  header.DecodeRest(rest.data());
  absl::StatusOr<TensorShape> shape = CheckedShape(header, what);
  if (!shape.ok()) return Malformed(shape.status());
  const DataType dtype = static_cast<DataType>(header.dtype);
  const bool given = into != nullptr && into->IsInitialized();
  if (given && (into->dtype() != dtype || into->NumElements() != shape->num_elements())) {
    return Malformed(errors::DataLoss(
        what(), ": ", DataTypeString(dtype), " ", shape->DebugString(), " where ",
        DataTypeString(into->dtype()), " [", into->NumElements(), "] was expected"));
  }
  absl::StatusOr<Tensor> tensor =
      given ? absl::StatusOr<Tensor>(into->Reshaped(*shape)) : Tensor::Allocate(dtype, *shape);
  if (!tensor.ok()) return Malformed(WithContext(tensor.status(), what()));
  char* dst = static_cast<char*>(tensor->raw_data());
  bool copied = false;
  if (in_place) {
    char where_bytes[InPlaceLocation::kBytes];
    if (in.ReadFull(where_bytes, sizeof(where_bytes), deadline) != sizeof(where_bytes)) {
      return Broken(what, "reading the answer");
    }
    const InPlaceCopy result =
        CopyInPlace(InPlaceLocation::Decode(where_bytes), dst, header.length);
    // Not allowed, or not that process: from now on the bytes come on the
    // connection. (A copy that failed otherwise falls back just this once.)
    if (result == InPlaceCopy::kRefused) in_place_refused->store(true);
    copied = result == InPlaceCopy::kCopied;
    // kCopied also proves that the server held the chunk throughout the
    // copy (its nonce was still there after it), so nothing more comes back:
    // the server lets the chunk go once it reads the verdict. A server that
    // gave up meanwhile (its wait ran out, it is stopping) wiped the nonce
    // (kFailed), and reads no 'S' either: the connection breaks below.
    const char verdict = copied ? kCopiedVerdict : kSendVerdict;
    if (!WriteFull(in.fd(), absl::string_view(&verdict, 1))) {
      return Broken(what, "answering the server");
    }
  }
  if (!copied && in.ReadFull(dst, header.length, deadline) != header.length) {
    return Broken(what, "reading the chunk");
  }
  CanonicalizeBools(&*tensor);  // the peer's bytes, as they came
  *out = *std::move(tensor);
  return {absl::OkStatus(), true};
}

AnswerRead ReadItemAnswer(Incoming& in, absl::Time deadline, What what, bool may_read_in_place,
                          const std::vector<bool>& answered, std::vector<Tensor>* outs,
                          std::atomic<bool>* in_place_refused, int* index) {
  *index = -1;
  char head[kItemIndexBytes + 1];
  if (in.ReadFull(head, sizeof(head), deadline) != sizeof(head)) {
    return Broken(what, "reading an item");
  }
  const uint32_t i = DecodeItemIndex(head);
  const auto kind = static_cast<AnswerKind>(head[kItemIndexBytes]);
  if (i >= answered.size() || answered[i]) {
    return Malformed(
        errors::DataLoss(what(), ": an item numbered ", i, " (", answered.size(), " asked for)"));
  }
  *index = static_cast<int>(i);
  Tensor* out = &(*outs)[i];
  switch (kind) {
    case AnswerKind::kError: return ReadErrorAnswer(in, kind, deadline, what);
    case AnswerKind::kProto: return ReadProtoAnswer(in, deadline, what, out);
    case AnswerKind::kTensor:
      return ReadTensorAnswer(in, false, deadline, what, nullptr, out, in_place_refused);
    case AnswerKind::kInPlace:
      if (may_read_in_place) {
        return ReadTensorAnswer(in, true, deadline, what, nullptr, out, in_place_refused);
      }
      break;
    default: break;
  }
  return UnexpectedAnswer(kind, what);
}

}  // namespace bulk
}  // namespace tensorgrid
