#include "distributed/rpc/grpc_session.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/framework/rendezvous.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/status.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/rpc/tensor_coding.h"

namespace tensorgrid {
namespace {

constexpr char kPrefix[] = "grpc://";
constexpr absl::Duration kDefaultRpcTimeout = absl::Seconds(60);
// A step without a timeout may block for long (a queue, a synchronous-
// training token); its RPC still has a deadline, this one.
constexpr absl::Duration kDefaultStepTimeout = absl::Hours(1);
// Extra time a step's RPC gets beyond the step's own limit, which the master
// enforces with a more telling message.
constexpr absl::Duration kStepGrace = absl::Seconds(1);
// Extra time the calls that may wait for tasks (CreateSession, ExtendSession,
// ListDevices) get beyond the startup timeout. The master ends its wait in
// time to answer before the call's deadline in any case (Master::Create's
// answer_by); this keeps it from cutting its own startup wait short.
constexpr absl::Duration kStartupGrace = absl::Seconds(5);

// Registers GrpcSession for "grpc://" targets when this library is linked.
struct Registration {
  Registration() {
    RegisterSessionFactory(
        kPrefix, [](const SessionOptions& options) -> absl::StatusOr<std::unique_ptr<Session>> {
          TG_ASSIGN_OR_RETURN(std::unique_ptr<GrpcSession> session, GrpcSession::New(options));
          return std::unique_ptr<Session>(std::move(session));
        });
  }
};
Registration registration;

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcSession>> GrpcSession::New(const SessionOptions& options) {
  if (!absl::StartsWith(options.target, kPrefix) || options.target.size() == sizeof(kPrefix) - 1) {
    return errors::InvalidArgument("target '", options.target, "' is not grpc://host:port");
  }
  TG_ASSIGN_OR_RETURN(RpcSecurity security, RpcSecurity::FromEnvironment());
  return std::unique_ptr<GrpcSession>(new GrpcSession(options.target.substr(sizeof(kPrefix) - 1),
                                                      options.config, std::move(security)));
}

GrpcSession::GrpcSession(std::string address, const ConfigProto& config, RpcSecurity security)
    : address_(std::move(address)),
      config_(config),
      rpc_timeout_(config.operation_timeout_in_ms() > 0
                       ? absl::Milliseconds(config.operation_timeout_in_ms())
                       : kDefaultRpcTimeout),
      security_(std::move(security)),
      bulk_(security_.tls() ? nullptr
                            : std::make_unique<BulkRoute>(BulkRoute::Options{
                                  bulk::HostOf(address_), "", security_.auth_token,
                                  absl::StrCat("master ", address_), nullptr})) {
  // Fetches may be large; the server caps what it receives.
  channel_ = NewChannel(address_, security_, /*max_receive_bytes=*/-1);
  stub_ = MasterService::NewStub(channel_);
}

void GrpcSession::Prepare(grpc::ClientContext* context, absl::Duration timeout) const {
  SetDeadline(context, timeout);
  AttachAuth(context, security_);
}

GrpcSession::~GrpcSession() {
  bool open;
  {
    absl::MutexLock lock(&mu_);
    open = !handle_.empty() && !closed_;
  }
  // Frees the session on the master; a master that is gone has nothing to free.
  if (open) Close().IgnoreError();
}

absl::StatusOr<std::string> GrpcSession::Handle() const {
  absl::ReaderMutexLock lock(&mu_);
  if (closed_) return errors::FailedPrecondition("session is closed");
  if (handle_.empty()) return errors::FailedPrecondition("session has no graph; call Create first");
  return handle_;
}

absl::Duration GrpcSession::StepTimeout(const RunOptions& options) const {
  const int64_t ms =
      options.timeout_in_ms() > 0 ? options.timeout_in_ms() : config_.operation_timeout_in_ms();
  return ms > 0 ? absl::Milliseconds(ms) + kStepGrace : kDefaultStepTimeout;
}

absl::Status GrpcSession::Finish(const char* method, const grpc::Status& status) const {
  return Finish(method, FromGrpcStatus(status));
}

absl::Status GrpcSession::Finish(const char* method, absl::Status s) const {
  if (s.ok()) return s;
  // The mark only helps a master choose among its workers' errors.
  if (IsDerivedError(s)) s = absl::Status(s.code(), s.message());
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
      return WithContext(s, absl::StrCat(method, " on master ", address_));
    default: return s;
  }
}

absl::Status GrpcSession::Create(const GraphDef& graph) {
  absl::MutexLock lock(&mu_);  // one Create at a time
  if (closed_) return errors::FailedPrecondition("session is closed");
  if (!handle_.empty()) {
    return errors::AlreadyExists("session already has a graph; use Extend to add nodes");
  }
  // The connection first, within the startup timeout: a peer that takes
  // it but never completes gRPC's handshake (no gRPC server there) is named
  // then, not after the call's grace with a bare deadline. One that refuses
  // it fails fast in the call below, as always.
  const absl::Time connect_by = absl::Now() + rpc_timeout_;
  for (grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
       state == GRPC_CHANNEL_IDLE || state == GRPC_CHANNEL_CONNECTING;
       state = channel_->GetState(/*try_to_connect=*/true)) {
    if (!channel_->WaitForStateChange(state, absl::ToChronoTime(connect_by))) {
      return errors::DeadlineExceeded(
          "CreateSession on master ", address_, ": no gRPC connection within ",
          absl::FormatDuration(rpc_timeout_),
          " (the address took the connection but never completed gRPC's handshake: is it a "
          "tensorgrid or TensorFlow server's gRPC port?)");
    }
  }
  CreateSessionRequest request;
  *request.mutable_graph_def() = graph;
  *request.mutable_config() = config_;
  CreateSessionResponse response;
  grpc::ClientContext context;
  // The master may wait up to the startup timeout (operation_timeout_in_ms)
  // for tasks; its answer naming the missing ones must arrive first.
  Prepare(&context, rpc_timeout_ + kStartupGrace);
  TG_RETURN_IF_ERROR(Finish("CreateSession", stub_->CreateSession(&context, request, &response)));
  handle_ = response.session_handle();
  if (bulk_ != nullptr) bulk_->Learn(response.bulk_port());
  return absl::OkStatus();
}

absl::Status GrpcSession::CallStep(
    const char* method, const google::protobuf::Message& request,
    google::protobuf::Message* response, absl::Duration timeout,
    const std::function<grpc::Status(grpc::ClientContext*)>& over_grpc) {
  // Past this, serializing would fail (gRPC's with a bare Internal).
  if (const size_t bytes = request.ByteSizeLong(); bytes > kMaxGrpcMessageBytes) {
    return errors::ResourceExhausted(method, ": the feeds make a request of ", bytes,
                                     " bytes, over the limit of ", kMaxGrpcMessageBytes,
                                     " bytes for one message");
  }
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status status;
  if (CallOnBulk(method, request, response, deadline, &status)) return status;
  grpc::ClientContext context;
  // What is left of the step's time, after a try on the bulk port.
  Prepare(&context, std::max(absl::Milliseconds(1), deadline - absl::Now()));
  return Finish(method, over_grpc(&context));
}

bool GrpcSession::CallOnBulk(const char* method, const google::protobuf::Message& request,
                             google::protobuf::Message* response, absl::Time deadline,
                             absl::Status* status) {
  std::string answer;
  if (bulk_ == nullptr ||
      !bulk_->Call(
          method, [&] { return request.SerializeAsString(); }, deadline, status, &answer)) {
    return false;
  }
  if (status->ok() && !response->ParseFromString(answer)) {
    *status = errors::DataLoss(method, " on the bulk port: the answer is not a ",
                               response->GetDescriptor()->full_name());
  }
  *status = Finish(method, *status);
  return true;
}

absl::Status GrpcSession::Extend(const GraphDef& graph) {
  TG_ASSIGN_OR_RETURN(std::string handle, Handle());
  ExtendSessionRequest request;
  request.set_session_handle(std::move(handle));
  *request.mutable_graph_def() = graph;
  ExtendSessionResponse response;
  grpc::ClientContext context;
  Prepare(&context, rpc_timeout_ + kStartupGrace);  // as Create: the first graph waits for tasks
  return Finish("ExtendSession", stub_->ExtendSession(&context, request, &response));
}

absl::Status GrpcSession::Run(const RunOptions& run_options,
                              const std::vector<std::pair<std::string, Tensor>>& inputs,
                              const std::vector<std::string>& output_names,
                              const std::vector<std::string>& target_names,
                              std::vector<Tensor>* outputs, RunMetadata* run_metadata) {
  if (outputs == nullptr && !output_names.empty()) {
    return errors::InvalidArgument("Run fetches ", output_names.size(),
                                   " tensors but has no outputs vector");
  }
  TG_ASSIGN_OR_RETURN(std::string handle, Handle());
  RunStepRequest request;
  request.set_session_handle(std::move(handle));
  for (const auto& [name, tensor] : inputs) {
    NamedTensorProto* feed = request.add_feed();
    feed->set_name(name);
    TensorToProto(tensor, feed->mutable_tensor());
  }
  for (const std::string& name : output_names) request.add_fetch(name);
  for (const std::string& name : target_names) request.add_target(name);
  *request.mutable_options() = run_options;
  RunStepResponse response;
  TG_RETURN_IF_ERROR(CallStep(
      kBulkRunStep, request, &response, StepTimeout(run_options),
      [&](grpc::ClientContext* context) { return stub_->RunStep(context, request, &response); }));
  if (response.tensor_size() != static_cast<int>(output_names.size())) {
    return errors::Internal("RunStep on master ", address_, " returned ", response.tensor_size(),
                            " tensors for ", output_names.size(), " fetches");
  }
  if (outputs != nullptr) {
    outputs->clear();
    outputs->reserve(output_names.size());
    for (const NamedTensorProto& named : response.tensor()) {
      absl::StatusOr<Tensor> tensor = TensorFromProto(named.tensor());
      if (!tensor.ok())
        return WithContext(tensor.status(), absl::StrCat("fetch '", named.name(), "'"));
      outputs->push_back(*std::move(tensor));
    }
  }
  if (run_metadata != nullptr) *run_metadata = std::move(*response.mutable_metadata());
  return absl::OkStatus();
}

absl::StatusOr<Session::CallableHandle> GrpcSession::MakeCallable(const CallableOptions& options) {
  TG_ASSIGN_OR_RETURN(std::string handle, Handle());
  MakeCallableRequest request;
  request.set_session_handle(std::move(handle));
  *request.mutable_options() = options;
  MakeCallableResponse response;
  grpc::ClientContext context;
  Prepare(&context, rpc_timeout_);
  TG_RETURN_IF_ERROR(Finish("MakeCallable", stub_->MakeCallable(&context, request, &response)));
  absl::MutexLock lock(&mu_);
  callable_timeouts_[response.handle()] = StepTimeout(options.run_options());
  return response.handle();
}

absl::Status GrpcSession::RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                                      std::vector<Tensor>* fetches, RunMetadata* run_metadata) {
  TG_ASSIGN_OR_RETURN(std::string session_handle, Handle());
  absl::Duration timeout = StepTimeout(RunOptions());
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = callable_timeouts_.find(handle);
    if (it != callable_timeouts_.end()) timeout = it->second;
  }
  RunCallableRequest request;
  request.set_session_handle(std::move(session_handle));
  request.set_handle(handle);
  for (const Tensor& t : feeds) TensorToProto(t, request.add_feed());
  RunCallableResponse response;
  TG_RETURN_IF_ERROR(
      CallStep(kBulkRunCallable, request, &response, timeout, [&](grpc::ClientContext* context) {
        return stub_->RunCallable(context, request, &response);
      }));
  if (fetches == nullptr && response.fetch_size() > 0) {
    return errors::InvalidArgument("callable ", handle, " fetched ", response.fetch_size(),
                                   " tensors but RunCallable has no fetches vector");
  }
  if (fetches != nullptr) {
    fetches->clear();
    fetches->reserve(response.fetch_size());
    for (int i = 0; i < response.fetch_size(); ++i) {
      absl::StatusOr<Tensor> tensor = TensorFromProto(response.fetch(i));
      if (!tensor.ok()) return WithContext(tensor.status(), absl::StrCat("fetch ", i));
      fetches->push_back(*std::move(tensor));
    }
  }
  if (run_metadata != nullptr) *run_metadata = std::move(*response.mutable_metadata());
  return absl::OkStatus();
}

absl::Status GrpcSession::ReleaseCallable(CallableHandle handle) {
  TG_ASSIGN_OR_RETURN(std::string session_handle, Handle());
  ReleaseCallableRequest request;
  request.set_session_handle(std::move(session_handle));
  request.set_handle(handle);
  ReleaseCallableResponse response;
  grpc::ClientContext context;
  Prepare(&context, rpc_timeout_);
  TG_RETURN_IF_ERROR(
      Finish("ReleaseCallable", stub_->ReleaseCallable(&context, request, &response)));
  absl::MutexLock lock(&mu_);
  callable_timeouts_.erase(handle);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DeviceInfo>> GrpcSession::ListDevices() {
  ListDevicesRequest request;
  {
    absl::ReaderMutexLock lock(&mu_);
    if (closed_) return errors::FailedPrecondition("session is closed");
    request.set_session_handle(handle_);  // empty before Create: the config says what to list
  }
  *request.mutable_config() = config_;
  ListDevicesResponse response;
  grpc::ClientContext context;
  Prepare(&context, rpc_timeout_ + kStartupGrace);  // the master may wait for tasks that long
  TG_RETURN_IF_ERROR(Finish("ListDevices", stub_->ListDevices(&context, request, &response)));
  std::vector<DeviceInfo> devices;
  for (const auto* list : {&response.local_device(), &response.remote_device()}) {
    for (const DeviceAttributesProto& d : *list) {
      devices.push_back(DeviceInfoFromProto(d));
    }
  }
  return devices;
}

absl::Status GrpcSession::Reset(const std::vector<std::string>& containers) {
  ResetRequest request;
  for (const std::string& c : containers) request.add_container(c);
  for (const std::string& f : config_.device_filters()) request.add_device_filters(f);
  ResetResponse response;
  grpc::ClientContext context;
  Prepare(&context, rpc_timeout_ + kStepGrace);
  TG_RETURN_IF_ERROR(Finish("Reset", stub_->Reset(&context, request, &response)));
  // The master closed every session it had, this one included.
  absl::MutexLock lock(&mu_);
  if (!handle_.empty()) closed_ = true;
  return absl::OkStatus();
}

absl::Status GrpcSession::Close() {
  std::string handle;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    handle = std::move(handle_);
  }
  if (handle.empty()) return absl::OkStatus();  // never created: nothing on the master
  CloseSessionRequest request;
  request.set_session_handle(std::move(handle));
  CloseSessionResponse response;
  grpc::ClientContext context;
  Prepare(&context, rpc_timeout_);
  return Finish("CloseSession", stub_->CloseSession(&context, request, &response));
}

}  // namespace tensorgrid
