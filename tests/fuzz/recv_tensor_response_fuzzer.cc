// RecvTensor's answer as the client decodes it (distributed/rpc/
// tensor_coding.h): DecodeRecvTensorResponse's fast path, which copies
// tensor_content straight from gRPC's slices into a tensor (possibly one the
// caller gives, a collective's chunk), its fallback through protobuf, and
// DecodeBulkResponse's ticket. A peer's answer decodes or is refused with
// DataLoss, InvalidArgument or ResourceExhausted; and the fast path agrees
// with protobuf: whenever it decodes a tensor, parsing the same bytes as a
// RecvTensorResponse and decoding its TensorProto gives the same tensor.
//
// Input: byte 0's bits: pass `into` (float [4]), accept a ticket; bytes 1-2
// cut the rest (the response's bytes) into up to three slices.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/framework/tensor_codec.h"
#include "distributed/rpc/tensor_coding.h"
#include "grpcpp/support/byte_buffer.h"
#include "proto/worker.pb.h"
#include "tests/fuzz/fuzz_util.h"

namespace tensorgrid {
namespace {

grpc::ByteBuffer Sliced(const std::string& bytes, size_t a, size_t b) {
  a = std::min(a, bytes.size());
  b = std::min(std::max(a, b), bytes.size());
  std::vector<grpc::Slice> slices;
  for (auto [from, to] : {std::pair{size_t{0}, a}, {a, b}, {b, bytes.size()}}) {
    if (to > from) slices.emplace_back(bytes.data() + from, to - from);
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && !DataTypeIsObject(a.dtype()) &&
         std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0;
}

void FuzzResponse(uint8_t flags, const grpc::ByteBuffer& wire, const std::string& flat) {
  Tensor into;
  if (flags & 1) into = Tensor(DT_FLOAT, TensorShape({4}));
  const Tensor* into_ptr = into.IsInitialized() ? &into : nullptr;
  BulkResponse ticket;
  absl::StatusOr<Tensor> decoded =
      DecodeRecvTensorResponse(wire, into_ptr, (flags & 2) ? &ticket : nullptr);
  if (!decoded.ok()) {
    fuzz::ExpectError(decoded.status(),
                      {absl::StatusCode::kDataLoss, absl::StatusCode::kInvalidArgument,
                       absl::StatusCode::kResourceExhausted},
                      "DecodeRecvTensorResponse");
  }
  std::optional<absl::StatusOr<BulkResponse>> bulk = DecodeBulkResponse(wire, into_ptr);
  if (bulk.has_value() && !bulk->ok()) {
    fuzz::ExpectError(bulk->status(),
                      {absl::StatusCode::kInvalidArgument, absl::StatusCode::kResourceExhausted},
                      "DecodeBulkResponse");
  }
  // protobuf's reading of the same bytes.
  RecvTensorResponse parsed;
  const bool parses = parsed.ParseFromString(flat);
  if (!decoded.ok()) return;
  if (!parses) fuzz::Fail("decoded a tensor from bytes protobuf does not parse");
  if (parsed.has_bulk()) {
    // The caller takes an empty ticket id for "the content is here".
    if (!(flags & 2)) fuzz::Fail("decoded a ticket's answer without asking for tickets");
    if (ticket.id.empty()) fuzz::Fail("a ticket's answer decoded as a tensor with content");
    return;
  }
  if (!ticket.id.empty()) fuzz::Fail("a ticket from an answer that names none");
  absl::StatusOr<Tensor> reference = TensorFromProto(parsed.tensor());
  if (!reference.ok()) {
    fuzz::Fail(absl::StrCat("decoded a tensor that TensorFromProto refuses: ",
                            reference.status().ToString()));
  }
  if (DataTypeIsObject(reference->dtype())) return;  // strings: protobuf's own path
  if (!SameBytes(*decoded, *reference)) {
    fuzz::Fail(absl::StrCat("the fast path decoded ", decoded->DebugString(), ", protobuf ",
                            reference->DebugString()));
  }
}

}  // namespace
}  // namespace tensorgrid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensorgrid::fuzz::Init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensorgrid;
  fuzz::Input in(data, size);
  const uint8_t flags = in.Byte();
  const size_t a = in.Byte(), b = a + in.Byte();
  const std::string response = in.Rest();
  FuzzResponse(flags, Sliced(response, a, b), response);
  return 0;
}
