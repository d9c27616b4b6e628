#include "distributed/rpc/tensor_coding.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "core/framework/tensor_codec.h"
#include "core/platform/status.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/support/slice.h"
#include "proto/worker.pb.h"

namespace tensorgrid {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

// Field numbers: RecvTensorResponse.tensor, and TensorProto's.
constexpr int kResponseTensorField = 1;
constexpr int kDtypeField = 1;
constexpr int kShapeField = 2;
constexpr int kVersionField = 3;
constexpr int kContentField = 4;

// Tensor bytes up to this size are copied into the header slice: a slice of
// its own costs a heap-held Tensor and a refcount allocation, more than
// copying a few hundred bytes.
constexpr size_t kInlineContentBytes = 1024;

constexpr uint32_t LengthDelimitedTag(int field) {
  return WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
}
constexpr uint32_t VarintTag(int field) {
  return WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_VARINT);
}

// A ZeroCopyInputStream over a ByteBuffer's slices, so protobuf reads the
// received bytes where gRPC left them.
class SliceInputStream final : public google::protobuf::io::ZeroCopyInputStream {
 public:
  explicit SliceInputStream(const std::vector<grpc::Slice>& slices) : slices_(slices) {}

  bool Next(const void** data, int* size) override {
    for (; index_ < slices_.size(); ++index_, offset_ = 0) {
      const grpc::Slice& slice = slices_[index_];
      if (offset_ < slice.size()) {
        // Chunks are ints; a slice beyond INT_MAX bytes is handed out in parts.
        const size_t n = std::min<size_t>(slice.size() - offset_, INT_MAX);
        *data = slice.begin() + offset_;
        *size = static_cast<int>(n);
        offset_ += n;
        byte_count_ += static_cast<int64_t>(n);
        return true;
      }
    }
    return false;
  }
  // Protobuf backs up only within the chunk Next returned last, which is
  // still the current slice.
  void BackUp(int count) override {
    offset_ -= static_cast<size_t>(count);
    byte_count_ -= count;
  }
  bool Skip(int count) override {
    const void* data;
    int size;
    while (count > 0) {
      if (!Next(&data, &size)) return false;
      if (size > count) {
        BackUp(size - count);
        return true;
      }
      count -= size;
    }
    return true;
  }
  int64_t ByteCount() const override { return byte_count_; }

 private:
  const std::vector<grpc::Slice>& slices_;
  size_t index_ = 0;
  size_t offset_ = 0;  // into slices_[index_]
  int64_t byte_count_ = 0;
};

// gRPC's destroy callback for a slice over a tensor's buffer.
void ReleaseTensor(void* tensor) { delete static_cast<Tensor*>(tensor); }

absl::Status ResponseTooLarge(absl::string_view key, const Tensor& tensor, uint64_t bytes,
                              size_t max_bytes) {
  return errors::ResourceExhausted(
      "RecvTensor response for '", key, "' (", DataTypeString(tensor.dtype()), " tensor of shape ",
      tensor.shape().DebugString(), ") would be ", bytes, " bytes, over the limit of ", max_bytes,
      " bytes for one gRPC message");
}

// String and resource tensors hold C++ objects, not bytes: the ordinary proto
// path, serialized straight into one slice.
absl::Status EncodeWithProto(const Tensor& tensor, absl::string_view key, grpc::ByteBuffer* out,
                             size_t max_bytes) {
  RecvTensorResponse response;
  TensorToProto(tensor, response.mutable_tensor());
  const size_t bytes = response.ByteSizeLong();
  if (bytes > max_bytes) return ResponseTooLarge(key, tensor, bytes, max_bytes);
  grpc::Slice slice(bytes);
  response.SerializeWithCachedSizesToArray(const_cast<uint8_t*>(slice.begin()));
  *out = grpc::ByteBuffer(&slice, 1);
  return absl::OkStatus();
}

}  // namespace

absl::Status EncodeRecvTensorResponse(const Tensor& tensor, absl::string_view key,
                                      grpc::ByteBuffer* out, size_t max_bytes) {
  if (DataTypeIsObject(tensor.dtype())) return EncodeWithProto(tensor, key, out, max_bytes);

  // Sizes first, in the order protobuf serializes fields (by number), so the
  // bytes match SerializeAsString() exactly. proto3 leaves out a zero dtype
  // and empty content; the shape is always present (TensorToProto sets it).
  TensorShapeProto shape;
  tensor.shape().AsProto(&shape);
  const uint64_t shape_bytes = shape.ByteSizeLong();  // caches sizes for the write below
  const uint64_t content_bytes = tensor.TotalBytes();
  const int dtype = tensor.dtype();
  uint64_t tensor_bytes = 1 + CodedOutputStream::VarintSize64(shape_bytes) + shape_bytes;
  if (dtype != 0) tensor_bytes += 1 + CodedOutputStream::VarintSize32(dtype);
  if (content_bytes > 0)
    tensor_bytes += 1 + CodedOutputStream::VarintSize64(content_bytes) + content_bytes;
  const uint64_t total = 1 + CodedOutputStream::VarintSize64(tensor_bytes) + tensor_bytes;
  if (total > max_bytes) return ResponseTooLarge(key, tensor, total, max_bytes);

  const bool inline_content = content_bytes <= kInlineContentBytes;
  grpc::Slice header(total - (inline_content ? 0 : content_bytes));
  uint8_t* p = const_cast<uint8_t*>(header.begin());  // a fresh slice, ours to fill
  p = CodedOutputStream::WriteVarint32ToArray(LengthDelimitedTag(kResponseTensorField), p);
  p = CodedOutputStream::WriteVarint64ToArray(tensor_bytes, p);
  if (dtype != 0) {
    p = CodedOutputStream::WriteVarint32ToArray(VarintTag(kDtypeField), p);
    p = CodedOutputStream::WriteVarint32SignExtendedToArray(dtype, p);
  }
  p = CodedOutputStream::WriteVarint32ToArray(LengthDelimitedTag(kShapeField), p);
  p = CodedOutputStream::WriteVarint64ToArray(shape_bytes, p);
  p = shape.SerializeWithCachedSizesToArray(p);
  if (content_bytes > 0) {
    p = CodedOutputStream::WriteVarint32ToArray(LengthDelimitedTag(kContentField), p);
    p = CodedOutputStream::WriteVarint64ToArray(content_bytes, p);
  }
  if (!inline_content) {
    // The second slice is the tensor's own memory; the heap-held Tensor keeps
    // the buffer alive until gRPC drops the slice after sending it.
    TG_DCHECK(p == header.end());
    grpc::Slice slices[2] = {std::move(header), grpc::Slice(tensor.raw_data(), content_bytes,
                                                            &ReleaseTensor, new Tensor(tensor))};
    *out = grpc::ByteBuffer(slices, 2);
    return absl::OkStatus();
  }
  if (content_bytes > 0)
    p = static_cast<uint8_t*>(std::memcpy(p, tensor.raw_data(), content_bytes)) + content_bytes;
  TG_DCHECK(p == header.end());
  *out = grpc::ByteBuffer(&header, 1);
  return absl::OkStatus();
}

namespace {

// `into` when it has `type` and as many elements as `dims` (reshaped to
// them), else a fresh tensor.
absl::StatusOr<Tensor> IntoOrAllocate(DataType type, const TensorShape& dims, const Tensor* into) {
  if (into != nullptr && into->IsInitialized() && into->dtype() == type &&
      into->NumElements() == dims.num_elements()) {
    return into->Reshaped(dims);
  }
  return Tensor::Allocate(type, dims);
}

// The layout EncodeRecvTensorResponse writes (and any protobuf serializer
// writes for a tensor_content tensor): field 1 holding dtype, shape, maybe
// version_number, then tensor_content, each once. Returns the tensor with its
// content copied straight from the stream into its buffer (`into`'s buffer
// when `into` has the tensor's dtype and element count); an error when the
// layout describes an impossible tensor; nullopt for anything else (other
// fields, another order, bytes that do not parse), which the caller hands to
// protobuf for a definitive answer.
std::optional<absl::StatusOr<Tensor>> DecodeContentLayout(CodedInputStream& in,
                                                          const Tensor* into) {
  if (in.ReadTag() != LengthDelimitedTag(kResponseTensorField)) return std::nullopt;
  int tensor_bytes;
  if (!in.ReadVarintSizeAsInt(&tensor_bytes)) return std::nullopt;
  const CodedInputStream::Limit limit = in.PushLimit(tensor_bytes);
  std::optional<uint32_t> dtype;
  std::optional<TensorShapeProto> shape;
  std::optional<Tensor> tensor;
  while (const uint32_t tag = in.ReadTag()) {
    if (tensor.has_value()) return std::nullopt;  // content is the last field
    if (tag == VarintTag(kDtypeField) && !dtype.has_value()) {
      uint32_t value;
      if (!in.ReadVarint32(&value)) return std::nullopt;
      dtype = value;
    } else if (tag == LengthDelimitedTag(kShapeField) && !shape.has_value()) {
      int bytes;
      std::string encoded;
      if (!in.ReadVarintSizeAsInt(&bytes) || !in.ReadString(&encoded, bytes)) return std::nullopt;
      if (!shape.emplace().ParseFromString(encoded)) return std::nullopt;
    } else if (tag == VarintTag(kVersionField)) {
      uint32_t ignored;
      if (!in.ReadVarint32(&ignored)) return std::nullopt;
    } else if (tag == LengthDelimitedTag(kContentField) && dtype.has_value() && shape.has_value()) {
      const DataType type = static_cast<DataType>(*dtype);
      // Dtypes the fast path cannot hold get TensorFromProto's own error.
      if (!DataTypeIsSupported(type) || IsRefType(type) || DataTypeIsObject(type))
        return std::nullopt;
      int bytes;
      if (!in.ReadVarintSizeAsInt(&bytes)) return std::nullopt;
      absl::StatusOr<TensorShape> dims = TensorShapeFromProto(*shape);
      if (!dims.ok()) return WithContext(dims.status(), "tensor proto");
      absl::StatusOr<Tensor> t = IntoOrAllocate(type, *dims, into);
      if (!t.ok()) return t.status();
      if (static_cast<size_t>(bytes) != t->TotalBytes()) {
        return errors::InvalidArgument("tensor proto has ", bytes, " bytes of tensor_content but ",
                                       DataTypeString(type), " ", dims->DebugString(), " needs ",
                                       t->TotalBytes());
      }
      if (!in.ReadRaw(t->raw_data(), bytes)) return std::nullopt;  // truncated
      CanonicalizeBools(&*t);  // as TensorFromProto does
      tensor = *std::move(t);
    } else {
      return std::nullopt;
    }
  }
  // Ending where field 1 says it ends, not at the end of the bytes: a field
  // that claims more bytes than follow is truncated (found by
  // recv_tensor_response_fuzzer: protobuf refuses it, so the fast path must).
  if (!tensor.has_value() || !in.ConsumedEntireMessage() || in.BytesUntilLimit() != 0) {
    return std::nullopt;
  }
  in.PopLimit(limit);
  // Nothing may follow: a second tensor field would be merged into the first.
  if (in.ReadTag() != 0 || !in.ConsumedEntireMessage()) return std::nullopt;
  return *std::move(tensor);
}

// The ticket of a parsed answer that names one, validated before anything
// is allocated: a garbage answer must not make us allocate.
absl::StatusOr<BulkResponse> TicketOf(const RecvTensorResponse& response, const Tensor* into) {
  const TensorProto& proto = response.tensor();
  const DataType type = static_cast<DataType>(proto.dtype());
  if (!DataTypeIsSupported(type) || IsRefType(type) || DataTypeIsObject(type)) {
    return errors::InvalidArgument("a bulk ticket for a tensor of dtype ", proto.dtype(),
                                   ", which cannot travel as bytes");
  }
  absl::StatusOr<TensorShape> dims = TensorShapeFromProto(proto.tensor_shape());
  if (!dims.ok()) return WithContext(dims.status(), "bulk ticket");
  const BulkTicket& ticket = response.bulk();
  // An empty id means "no ticket, the content is here" to every caller.
  if (ticket.id().empty()) {
    return errors::InvalidArgument("a bulk ticket without an id for ", DataTypeString(type), " ",
                                   dims->DebugString());
  }
  const uint64_t elements = static_cast<uint64_t>(dims->num_elements());
  const uint64_t size = static_cast<uint64_t>(DataTypeSize(type));
  const bool fits = size == 0 || elements <= UINT64_MAX / size;
  if (!fits || ticket.bytes() < 0 || static_cast<uint64_t>(ticket.bytes()) != elements * size ||
      ticket.port() <= 0 || ticket.port() > 65535) {
    return errors::InvalidArgument("bulk ticket for ", ticket.bytes(), " bytes on port ",
                                   ticket.port(), ", which does not describe ",
                                   DataTypeString(type), " ", dims->DebugString());
  }
  absl::StatusOr<Tensor> t = IntoOrAllocate(type, *dims, into);
  if (!t.ok()) return t.status();
  return BulkResponse{*std::move(t), ticket.id(), ticket.port()};
}

}  // namespace

absl::StatusOr<Tensor> DecodeRecvTensorResponse(const grpc::ByteBuffer& wire, const Tensor* into,
                                                BulkResponse* ticket) {
  if (ticket != nullptr) ticket->id.clear();
  std::vector<grpc::Slice> slices;
  if (!wire.Dump(&slices).ok()) return absl::DataLossError("the RecvTensor response is missing");
  {
    SliceInputStream stream(slices);
    CodedInputStream in(&stream);
    std::optional<absl::StatusOr<Tensor>> fast = DecodeContentLayout(in, into);
    if (fast.has_value()) return *std::move(fast);
  }
  RecvTensorResponse response;
  SliceInputStream stream(slices);
  if (!response.ParseFromZeroCopyStream(&stream)) {
    return absl::DataLossError(absl::StrCat("the RecvTensor response (", wire.Length(),
                                            " bytes) does not parse as a RecvTensorResponse"));
  }
  if (response.has_bulk()) {
    if (ticket == nullptr) {
      return errors::InvalidArgument(
          "the RecvTensor response names a bulk ticket, "
          "which was not asked for");
    }
    TG_ASSIGN_OR_RETURN(*ticket, TicketOf(response, into));
    return ticket->tensor;
  }
  return TensorFromProto(response.tensor());
}

absl::Status EncodeBulkResponse(const Tensor& tensor, const std::string& id, int port,
                                grpc::ByteBuffer* out) {
  RecvTensorResponse response;
  response.mutable_tensor()->set_dtype(tensor.dtype());
  tensor.shape().AsProto(response.mutable_tensor()->mutable_tensor_shape());
  BulkTicket* ticket = response.mutable_bulk();
  ticket->set_id(id);
  ticket->set_port(port);
  ticket->set_bytes(static_cast<int64_t>(tensor.TotalBytes()));
  bool own_buffer = false;
  const grpc::Status s =
      grpc::SerializationTraits<RecvTensorResponse>::Serialize(response, out, &own_buffer);
  if (!s.ok()) return errors::Internal("serializing a bulk ticket: ", s.error_message());
  return absl::OkStatus();
}

std::optional<absl::StatusOr<BulkResponse>> DecodeBulkResponse(const grpc::ByteBuffer& wire,
                                                               const Tensor* into) {
  // A ticket's answer is a few dozen bytes; anything larger holds content.
  if (wire.Length() > 4096) return std::nullopt;
  RecvTensorResponse response;
  if (!ParseFromByteBuffer(wire, &response) || !response.has_bulk()) return std::nullopt;
  return TicketOf(response, into);
}

bool ParseFromByteBuffer(const grpc::ByteBuffer& wire, google::protobuf::MessageLite* message) {
  std::vector<grpc::Slice> slices;
  if (!wire.Dump(&slices).ok()) return false;
  SliceInputStream stream(slices);
  return message->ParseFromZeroCopyStream(&stream);
}

}  // namespace tensorgrid
