#include "distributed/rpc/grpc_util.h"

#include <chrono>
#include <string>

#include "absl/strings/cord.h"
#include "google/protobuf/any.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"

namespace tensorgrid {

// Both enums are google.rpc.Code; these keep the cast below honest.
static_assert(static_cast<int>(absl::StatusCode::kInvalidArgument) ==
              static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
static_assert(static_cast<int>(absl::StatusCode::kUnauthenticated) ==
              static_cast<int>(grpc::StatusCode::UNAUTHENTICATED));
static_assert(static_cast<int>(absl::StatusCode::kDataLoss) ==
              static_cast<int>(grpc::StatusCode::DATA_LOSS));

namespace {

using google::protobuf::internal::WireFormatLite;

// google.rpc.Status field numbers.
constexpr int kStatusCodeField = 1;
constexpr int kStatusMessageField = 2;
constexpr int kStatusDetailsField = 3;

// `status` with its payloads as a serialized google.rpc.Status; empty when
// there are no payloads.
std::string EncodeDetails(const absl::Status& status) {
  std::string details;
  bool any_payload = false;
  {
    google::protobuf::io::StringOutputStream stream(&details);
    google::protobuf::io::CodedOutputStream out(&stream);
    WireFormatLite::WriteInt32(kStatusCodeField, static_cast<int>(status.code()), &out);
    WireFormatLite::WriteString(kStatusMessageField, std::string(status.message()), &out);
    status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
      google::protobuf::Any any;
      any.set_type_url(std::string(url));
      any.set_value(std::string(payload));
      WireFormatLite::WriteBytes(kStatusDetailsField, any.SerializeAsString(), &out);
      any_payload = true;
    });
  }
  return any_payload ? details : std::string();
}

// Adds the payloads of a serialized google.rpc.Status to `status`. Details
// that do not parse are ignored: the code and message still stand.
void DecodeDetails(const std::string& details, absl::Status* status) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(details.data()),
                                            static_cast<int>(details.size()));
  while (uint32_t tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == kStatusDetailsField &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      std::string bytes;
      google::protobuf::Any any;
      if (!WireFormatLite::ReadBytes(&in, &bytes) || !any.ParseFromString(bytes)) return;
      status->SetPayload(any.type_url(), absl::Cord(any.value()));
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return;
    }
  }
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()),
                      EncodeDetails(status));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const int code = static_cast<int>(status.error_code());
  if (code <= 0 || code > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    return absl::UnknownError(status.error_message());
  }
  absl::Status out(static_cast<absl::StatusCode>(code), status.error_message());
  if (!status.error_details().empty()) DecodeDetails(status.error_details(), &out);
  return out;
}

void SetDeadline(grpc::ClientContext* context, absl::Duration timeout) {
  if (timeout <= absl::ZeroDuration() || timeout == absl::InfiniteDuration()) return;
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            absl::ToChronoNanoseconds(timeout)));
}

}  // namespace tensorgrid
