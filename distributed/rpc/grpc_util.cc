#include "distributed/rpc/grpc_util.h"

#include <chrono>
#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/platform/malloc_tuning.h"
#include "core/platform/status.h"
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

void DeviceInfoToProto(const DeviceInfo& info, DeviceAttributesProto* proto) {
  proto->set_name(info.name);
  proto->set_device_type(info.type);
  proto->set_incarnation(info.incarnation);
  proto->set_memory_limit(info.memory_limit);
  proto->set_physical_device_desc(info.description);
}

DeviceInfo DeviceInfoFromProto(const DeviceAttributesProto& proto) {
  DeviceInfo info;
  info.name = proto.name();
  info.type = proto.device_type();
  info.incarnation = proto.incarnation();
  info.memory_limit = proto.memory_limit();
  info.description = proto.physical_device_desc();
  return info;
}

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

namespace tensorgrid {
namespace {

constexpr char kAuthKey[] = "authorization";
constexpr char kBearer[] = "Bearer ";

// Constant time in where the strings differ (not in their lengths, which
// say little about a random token).
bool SameSecret(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const RpcSecurity& security) {
  if (!security.tls()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = security.tls_ca;
  options.pem_cert_chain = security.tls_cert;
  options.pem_private_key = security.tls_key;
  return grpc::SslCredentials(options);
}

std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const RpcSecurity& security) {
  if (!security.tls()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      security.tls_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = security.tls_ca;
  options.pem_key_cert_pairs.push_back({security.tls_key, security.tls_cert});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, const RpcSecurity& security,
                                          int max_receive_bytes) {
  KeepLargeFreedMemory();  // gRPC's receive buffers: see malloc_tuning.h
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(max_receive_bytes);
  args.SetMaxSendMessageSize(-1);  // the receiving server enforces its own cap
  // During a call, ping the peer every 10 s and give up on it after 10 s
  // more without an answer: a long step on a peer that froze or vanished
  // without closing its connection fails Unavailable instead of waiting for
  // its deadline. (Servers allow pings this often: see
  // GrpcFrontDoor::RegisterOn.)
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);  // keep pinging a silent call
  // A peer that was away for a while (restarting, not up yet) is tried
  // again at least every second, as TensorFlow's channels do: gRPC's own
  // backoff grows to two minutes, which a master waiting for the task, or
  // a step after the task came back, would wait out.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  return grpc::CreateCustomChannel(address, ChannelCredentials(security), args);
}

void AttachAuth(grpc::ClientContext* context, const RpcSecurity& security) {
  if (!security.auth_token.empty()) {
    context->AddMetadata(kAuthKey, absl::StrCat(kBearer, security.auth_token));
  }
}

grpc::Status CheckAuth(const grpc::ServerContextBase& context, const std::string& token) {
  if (token.empty()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kAuthKey);
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "this server requires an auth token; the call carried none (set "
                        "TG_AUTH_TOKEN_FILE or --auth_token_file)");
  }
  const absl::string_view given(it->second.data(), it->second.size());
  if (!absl::StartsWith(given, kBearer) || !SameSecret(given.substr(sizeof(kBearer) - 1), token)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "the call's auth token does not match this server's");
  }
  return grpc::Status::OK;
}

grpc::Status InvalidMessageStatus(absl::string_view method) {
  return grpc::Status(
      grpc::StatusCode::INVALID_ARGUMENT,
      absl::StrCat("request to ", method, " is not a valid message for that method"));
}

}  // namespace tensorgrid
