// RecvTensor's response on the wire without protobuf's copies of the tensor
// bytes.
//
// The answer to RecvTensor is the wire form of
//   RecvTensorResponse { tensor: TensorProto { dtype, tensor_shape, tensor_content } }
// written by hand as a grpc::ByteBuffer: a small header slice (tags, lengths,
// dtype, shape) and a slice that references the tensor's own buffer, holding
// a reference to the Tensor until gRPC has sent it. The bytes are exactly
// what RecvTensorResponse::SerializeAsString() writes, so any protobuf client
// can parse them. String and resource tensors (C++ objects, not raw bytes)
// go through TensorToProto and an ordinary serialization.
//
// The receiver walks the ByteBuffer's slices and copies tensor_content
// straight into a freshly allocated, aligned Tensor (or one the caller
// provides): one copy, no
// std::string in between. Encodings other than that layout (typed *_val
// fields, fields in an unusual order) go through the ordinary protobuf parse.
//
//   grpc::ByteBuffer wire;
//   absl::Status s = EncodeRecvTensorResponse(tensor, key, &wire);   // server
//   absl::StatusOr<Tensor> t = DecodeRecvTensorResponse(wire);        // client
#ifndef TENSORGRID_DISTRIBUTED_RPC_TENSOR_CODING_H_
#define TENSORGRID_DISTRIBUTED_RPC_TENSOR_CODING_H_

#include <climits>
#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/framework/tensor.h"
#include "google/protobuf/message_lite.h"
#include "grpcpp/support/byte_buffer.h"

namespace tensorgrid {

// The most one gRPC message can carry: gRPC's size limits and its C++ API's
// lengths are ints. Servers and clients set their limits to this explicitly.
constexpr size_t kMaxGrpcMessageBytes = INT_MAX;

// Writes RecvTensorResponse{tensor} into `out`. A response larger than
// `max_bytes` is ResourceExhausted naming `key`, the response's size and the
// limit (the tensor is not touched). `tensor` must be initialized.
absl::Status EncodeRecvTensorResponse(const Tensor& tensor, absl::string_view key,
                                      grpc::ByteBuffer* out,
                                      size_t max_bytes = kMaxGrpcMessageBytes);

// The tensor in a serialized RecvTensorResponse. Bytes that do not parse are
// DataLoss; a tensor proto that does not describe a tensor (content of the
// wrong size, an unknown dtype) is InvalidArgument; a tensor too large to
// allocate is ResourceExhausted. Never crashes on bad input.
//
// When `into` is an initialized tensor of the response's dtype and number of
// elements, the content is written straight into its buffer and the result
// shares that buffer (a collective chunk lands in its place in the output:
// no second copy); otherwise, and for encodings off the fast path, the result
// is a fresh tensor. Callers tell the two apart by comparing buffers.
//
// An answer that names a bulk ticket instead of holding the content (see
// below) fills `*ticket` and returns the tensor to fill (`into`'s buffer when
// it fits); `ticket->id` stays empty for an ordinary answer. Without
// `ticket`, such an answer is InvalidArgument.
struct BulkResponse;
absl::StatusOr<Tensor> DecodeRecvTensorResponse(const grpc::ByteBuffer& wire,
                                                const Tensor* into = nullptr,
                                                BulkResponse* ticket = nullptr);

// Bulk transfer (distributed/transport/bulk_server.h): an answer that names a ticket instead of
// holding the content. RecvTensorResponse{tensor: {dtype, tensor_shape},
// bulk: {id, port, bytes}}.
absl::Status EncodeBulkResponse(const Tensor& tensor, const std::string& id, int port,
                                grpc::ByteBuffer* out);
struct BulkResponse {
  Tensor tensor;  // to fill: `into`'s buffer when it fits (as above), else fresh
  std::string id;
  int port = 0;
};
// Nullopt when `wire` is not a ticket's answer; InvalidArgument when the
// ticket has no id, describes no tensor that can be filled with bytes, or a
// size that is not that tensor's (DecodeRecvTensorResponse checks the same).
std::optional<absl::StatusOr<BulkResponse>> DecodeBulkResponse(const grpc::ByteBuffer& wire,
                                                               const Tensor* into = nullptr);

// Parses `wire` into `message` without first flattening it into a string.
// False when the bytes do not parse.
bool ParseFromByteBuffer(const grpc::ByteBuffer& wire, google::protobuf::MessageLite* message);

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_TENSOR_CODING_H_
