#include "distributed/rpc/grpc_master_service.h"

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/framework/device_name.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/status.h"
#include "distributed/rpc/feed_decoding.h"
#include "distributed/rpc/grpc_front_door.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/rpc/tensor_coding.h"

namespace tensorgrid {
namespace {

// 128 random bits as hex: unguessable enough that one client cannot stumble
// on another's session.
std::string RandomHandle() {
  std::random_device random;
  std::string handle;
  for (int i = 0; i < 4; ++i) {
    absl::StrAppend(&handle, absl::Hex(random(), absl::kZeroPad8));
  }
  return handle;
}

// Requests and answers of more than this many bytes are decoded and encoded
// on the service's pool: copying them would hold one of gRPC's few callback
// threads, and every call of the process waits for those.
constexpr size_t kInlineBytes = size_t{1} << 20;

size_t TotalBytes(const std::vector<Tensor>& tensors) {
  size_t bytes = 0;
  for (const Tensor& t : tensors) bytes += t.TotalBytes();
  return bytes;
}

// ResourceExhausted when `response` is past what one
// message (gRPC's, or the bulk port's answer) can carry, naming `method`.
absl::Status CheckAnswerSize(const char* method, const google::protobuf::Message& response) {
  const size_t bytes = response.ByteSizeLong();
  if (bytes <= kMaxGrpcMessageBytes) return absl::OkStatus();
  return errors::ResourceExhausted(method, ": the fetched tensors make an answer of ", bytes,
                                   " bytes, over the limit of ", kMaxGrpcMessageBytes,
                                   " bytes for one message");
}

// One RunStep, over gRPC or the bulk port: its request, the session's
// Master, and what the step fills in. Held by shared_ptr until the step's
// answer is made.
struct StepCall {
  static constexpr const char* kMethod = kBulkRunStep;  // also its gRPC method
  RunStepRequest request;
  GrpcMasterService::InUse master;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> feed_names, fetches, targets;
  std::vector<Tensor> outputs;
  RunStepResponse response;

  // Takes the parsed request apart; InvalidArgument naming a feed that does
  // not decode.
  absl::Status Unpack() {
    TG_ASSIGN_OR_RETURN(feeds, DecodeRunStepFeeds(request.feed()));
    for (const auto& feed : feeds) feed_names.push_back(feed.first);
    fetches.assign(request.fetch().begin(), request.fetch().end());
    targets.assign(request.target().begin(), request.target().end());
    return absl::OkStatus();
  }
  // Whether Run will not block building the signature first.
  bool IsBuilt() const { return master->IsBuilt(feed_names, fetches, targets); }
  void Run(CancellationManager* cancellation, StatusCallback done) {
    master->RunAsync(request.options(), feeds, fetches, targets, &outputs,
                     response.mutable_metadata(), cancellation, std::move(done));
  }
  size_t OutputBytes() const { return TotalBytes(outputs); }
  // After a successful Run.
  void Encode() {
    for (size_t i = 0; i < outputs.size(); ++i) {
      NamedTensorProto* named = response.add_tensor();
      named->set_name(fetches[i]);
      TensorToProto(outputs[i], named->mutable_tensor());
    }
  }
};

// The same for RunCallable.
struct CallableCall {
  static constexpr const char* kMethod = kBulkRunCallable;
  RunCallableRequest request;
  GrpcMasterService::InUse master;
  std::vector<Tensor> feeds;
  std::vector<Tensor> fetches;
  RunCallableResponse response;

  absl::Status Unpack() {
    TG_ASSIGN_OR_RETURN(feeds, DecodeRunCallableFeeds(request.feed()));
    return absl::OkStatus();
  }
  bool IsBuilt() const { return true; }  // a callable is built when it is made
  void Run(CancellationManager* cancellation, StatusCallback done) {
    master->RunCallableAsync(request.handle(), feeds, &fetches, response.mutable_metadata(),
                             cancellation, std::move(done));
  }
  size_t OutputBytes() const { return TotalBytes(fetches); }
  void Encode() {
    for (const Tensor& t : fetches) TensorToProto(t, response.add_fetch());
  }
};

}  // namespace

GrpcMasterService::InUse::InUse(std::shared_ptr<Master> master,
                                std::shared_ptr<std::atomic<int>> calls)
    : master_(std::move(master)), calls_(std::move(calls)) {
  if (calls_ != nullptr) calls_->fetch_add(1, std::memory_order_acq_rel);
}

GrpcMasterService::InUse& GrpcMasterService::InUse::operator=(InUse&& other) {
  Done();
  master_ = std::move(other.master_);
  calls_ = std::move(other.calls_);
  return *this;
}

void GrpcMasterService::InUse::Done() {
  if (calls_ == nullptr) return;
  calls_->fetch_sub(1, std::memory_order_acq_rel);
  calls_.reset();
}

GrpcMasterService::GrpcMasterService(MasterFactory factory, GrpcFrontDoor* door,
                                     const Options& options)
    : factory_(std::move(factory)), options_(options) {
  AddMethods(door);
}

void GrpcMasterService::AddMethods(GrpcFrontDoor* door) {
  using Done = std::function<void(absl::Status)>;
  // Each waits for other tasks (or for the signature's RegisterGraph calls):
  // on a thread of its own.
  constexpr GrpcFrontDoor::Runs kOwnThread = GrpcFrontDoor::Runs::kOnOwnThread;
  const std::string service = "/tensorgrid.MasterService/";
  // Their waits for tasks end in time to answer before the client's deadline.
  door->AddWithDeadline<CreateSessionRequest, CreateSessionResponse>(
      service + "CreateSession", kOwnThread,
      [this](const CreateSessionRequest& request, CreateSessionResponse* response,
             absl::Time deadline, const CancellationManager* cancellation,
             Done done) { done(CreateSession(request, response, deadline, cancellation)); });
  door->AddWithDeadline<ExtendSessionRequest, ExtendSessionResponse>(
      service + "ExtendSession", kOwnThread,
      [this](const ExtendSessionRequest& request, ExtendSessionResponse*, absl::Time deadline,
             const CancellationManager* cancellation,
             Done done) { done(ExtendSession(request, deadline, cancellation)); });
  door->Add<MakeCallableRequest, MakeCallableResponse>(
      service + "MakeCallable", kOwnThread,
      [this](const MakeCallableRequest& request, MakeCallableResponse* response, Done done) {
        done(MakeCallable(request, response));
      });
  door->Add<ReleaseCallableRequest, ReleaseCallableResponse>(
      service + "ReleaseCallable", kOwnThread,
      [this](const ReleaseCallableRequest& request, ReleaseCallableResponse*, Done done) {
        done(ReleaseCallable(request));
      });
  door->Add<CloseSessionRequest, CloseSessionResponse>(
      service + "CloseSession", kOwnThread,
      [this](const CloseSessionRequest& request, CloseSessionResponse*, Done done) {
        done(CloseSession(request));
      });
  door->AddWithDeadline<ListDevicesRequest, ListDevicesResponse>(
      service + "ListDevices", kOwnThread,
      [this](const ListDevicesRequest& request, ListDevicesResponse* response, absl::Time deadline,
             const CancellationManager* cancellation,
             Done done) { done(ListDevices(request, response, deadline, cancellation)); });
  door->Add<ResetRequest, ResetResponse>(
      service + "Reset", kOwnThread,
      [this](const ResetRequest& request, ResetResponse*, Done done) { done(Reset(request)); });
  // Steps hold no thread while they run.
  door->Add(service + kBulkRunStep, GrpcFrontDoor::Runs::kInline,
            [this](std::shared_ptr<GrpcCall> call) { ServeStep<StepCall>(std::move(call)); });
  door->Add(service + kBulkRunCallable, GrpcFrontDoor::Runs::kInline,
            [this](std::shared_ptr<GrpcCall> call) { ServeStep<CallableCall>(std::move(call)); });
}

GrpcMasterService::~GrpcMasterService() {
  absl::flat_hash_map<std::string, Session> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  // Closed here, on this thread: a Master whose last reference a finishing
  // step drops is then destroyed without calling any worker, even on one of
  // gRPC's callback threads.
  for (auto& [handle, session] : sessions) session.master->Close().IgnoreError();
}

absl::StatusOr<GrpcMasterService::InUse> GrpcMasterService::Find(const std::string& handle) {
  std::vector<std::shared_ptr<Master>> closing;
  absl::StatusOr<InUse> found;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    CollectIdle(now, &closing);
    auto it = sessions_.find(handle);
    if (it != sessions_.end()) {
      it->second.last_used = now;
      found = InUse(it->second.master, it->second.calls);
    } else if (auto ended = ended_.find(handle); ended != ended_.end()) {
      found = errors::NotFound("session '", handle, "' was closed by this master: ", ended->second);
    } else {
      found = errors::NotFound("no session with handle '", handle,
                               "' (closed, or this master restarted)");
    }
  }
  CloseLater(std::move(closing));
  return found;
}

void GrpcMasterService::Forget(absl::flat_hash_map<std::string, Session>::iterator it,
                               std::string why, std::vector<std::shared_ptr<Master>>* closing) {
  constexpr size_t kRememberEnded = 4096;
  if (ended_order_.size() >= kRememberEnded) {
    ended_.erase(ended_order_.front());
    ended_order_.pop_front();
  }
  ended_order_.push_back(it->first);
  ended_[it->first] = std::move(why);
  closing->push_back(std::move(it->second.master));
  sessions_.erase(it);
}

void GrpcMasterService::CollectIdle(absl::Time now, std::vector<std::shared_ptr<Master>>* closing) {
  if (options_.session_gc <= absl::ZeroDuration() || now < next_collection_) return;
  next_collection_ = now + std::min(absl::Seconds(1), options_.session_gc);
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    const absl::Time active = std::max(it->second.last_used, it->second.master->LastActive());
    if (it->second.calls->load(std::memory_order_acquire) > 0 ||
        now - active < options_.session_gc) {
      ++it;
      continue;
    }
    Forget(it++,
           absl::StrCat("it was idle for ", absl::FormatDuration(options_.session_gc),
                        " (session_gc_seconds)"),
           closing);
  }
}

absl::Status GrpcMasterService::MakeRoom(absl::Time now,
                                         std::vector<std::shared_ptr<Master>>* closing) {
  const absl::Duration kMinIdleToEvict = options_.min_idle_to_evict;
  if (static_cast<int>(sessions_.size()) < options_.max_sessions) return absl::OkStatus();
  auto oldest = sessions_.end();
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    it->second.last_used = std::max(it->second.last_used, it->second.master->LastActive());
    if (it->second.calls->load(std::memory_order_acquire) > 0 ||
        now - it->second.last_used < kMinIdleToEvict) {
      continue;
    }
    if (oldest == sessions_.end() || it->second.last_used < oldest->second.last_used) oldest = it;
  }
  if (oldest == sessions_.end()) {
    return errors::ResourceExhausted("this master has ", sessions_.size(),
                                     " sessions open (max_sessions), none idle for ",
                                     absl::FormatDuration(kMinIdleToEvict),
                                     ": close sessions that are done, or raise the limit");
  }
  Forget(oldest,
         absl::StrCat(
             "it was the least recently used of ", options_.max_sessions,
             " open sessions (max_sessions), idle for ",
             absl::FormatDuration(absl::Trunc(now - oldest->second.last_used, absl::Seconds(1))),
             ", when another was created"),
         closing);
  return absl::OkStatus();
}

void GrpcMasterService::CloseLater(std::vector<std::shared_ptr<Master>> closing) {
  for (std::shared_ptr<Master>& master : closing) {
    slow_.Schedule([master = std::move(master)] { master->Close().IgnoreError(); });
  }
}

absl::Status GrpcMasterService::CreateSession(const CreateSessionRequest& request,
                                              CreateSessionResponse* response, absl::Time answer_by,
                                              const CancellationManager* cancellation) {
  std::shared_ptr<Master> master = factory_(request.config());
  if (master == nullptr) return errors::Unavailable("this server runs no sessions");
  // The graph is checked before the session exists: a bad graph leaves nothing behind.
  TG_RETURN_IF_ERROR(master->Create(request.graph_def(), answer_by, cancellation));
  std::string handle;
  std::vector<std::shared_ptr<Master>> closing;
  absl::Status room;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    CollectIdle(now, &closing);
    room = MakeRoom(now, &closing);
    if (room.ok()) {
      do {
        handle = RandomHandle();
      } while (sessions_.contains(handle));
      sessions_.emplace(handle, Session{std::move(master), now});
    }
  }
  CloseLater(std::move(closing));
  if (!room.ok()) {
    master->Close().IgnoreError();
    return room;
  }
  response->set_session_handle(std::move(handle));
  response->set_bulk_port(bulk_port_);
  return absl::OkStatus();
}

absl::Status GrpcMasterService::ExtendSession(const ExtendSessionRequest& request,
                                              absl::Time answer_by,
                                              const CancellationManager* cancellation) {
  TG_ASSIGN_OR_RETURN(InUse master, Find(request.session_handle()));
  return master->Extend(request.graph_def(), answer_by, cancellation);
}

template <typename Call>
void GrpcMasterService::ServeStep(std::shared_ptr<GrpcCall> grpc_call) {
  // Parsing and decoding a large request would hold a callback thread.
  const bool large = grpc_call->request().Length() > kInlineBytes;
  OffloadIf(large, [this, grpc_call = std::move(grpc_call)] {
    auto call = std::make_shared<Call>();
    if (!ParseRequest(*grpc_call, &call->request)) return;
    if (absl::Status s = Open(*call); !s.ok()) {
      grpc_call->Finish(ToGrpcStatus(s));
      return;
    }
    // The client cancelling the call, or going away, cancels the step.
    auto cancellation = std::make_shared<CancellationManager>();
    grpc_call->OnCancel([cancellation] { cancellation->StartCancel(); });
    auto run = [this, grpc_call, call, cancellation] {
      call->Run(cancellation.get(), [this, grpc_call, call, cancellation](absl::Status s) {
        call->master.Done();
        if (!s.ok()) {
          grpc_call->Finish(ToGrpcStatus(s));
          return;
        }
        OffloadIf(call->OutputBytes() > kInlineBytes, [grpc_call, call] {
          call->Encode();
          if (absl::Status s = CheckAnswerSize(Call::kMethod, call->response); !s.ok()) {
            grpc_call->Finish(ToGrpcStatus(s));
            return;
          }
          grpc_call->Reply(call->response);
        });
      });
    };
    // Building blocks on RegisterGraph calls: never on a callback thread.
    OffloadIf(!call->IsBuilt(), std::move(run));
  });
}

template <typename Call>
absl::Status GrpcMasterService::Open(Call& call) {
  TG_ASSIGN_OR_RETURN(call.master, Find(call.request.session_handle()));
  return call.Unpack();
}

absl::Status GrpcMasterService::MakeCallable(const MakeCallableRequest& request,
                                             MakeCallableResponse* response) {
  TG_ASSIGN_OR_RETURN(InUse master, Find(request.session_handle()));
  TG_ASSIGN_OR_RETURN(int64_t handle, master->MakeCallable(request.options()));
  response->set_handle(handle);
  return absl::OkStatus();
}

template <typename Call>
void GrpcMasterService::ServeStepOn(BulkServer* bulk) {
  // Parsed on the port's connection thread. What outlives the call (the
  // step, its answer) holds the call, never this service; the port's Stop
  // waits for every step's answer, and runs before the service goes.
  bulk->ServeCall(Call::kMethod, [this](std::string wire, absl::Time,
                                        CancellationManager* cancellation,
                                        BulkServer::CallDone done) {
    auto call = std::make_shared<Call>();
    if (!call->request.ParseFromString(wire)) {
      return done(errors::InvalidArgument(Call::kMethod, " on the bulk port: the request is not a ",
                                          call->request.GetDescriptor()->full_name()),
                  nullptr);
    }
    if (absl::Status s = Open(*call); !s.ok()) return done(std::move(s), nullptr);
    auto run = [call, cancellation, done = std::move(done)] {
      call->Run(cancellation, [call, done](absl::Status s) {
        call->master.Done();
        if (!s.ok()) return done(std::move(s), nullptr);
        // Made on the port's connection thread, not the one ending the step.
        done(std::move(s), [call]() -> absl::StatusOr<std::string> {
          call->Encode();
          TG_RETURN_IF_ERROR(CheckAnswerSize(Call::kMethod, call->response));
          return call->response.SerializeAsString();
        });
      });
    };
    // Building blocks on RegisterGraph calls: on the pool, so that the port
    // watches the client (and its deadline) meanwhile, and a step whose
    // client went away never starts.
    OffloadIf(!call->IsBuilt(), std::move(run));
  });
}

void GrpcMasterService::ServeStepsOn(BulkServer* bulk) {
  bulk_port_ = bulk->port();
  ServeStepOn<StepCall>(bulk);
  ServeStepOn<CallableCall>(bulk);
}

void GrpcMasterService::OffloadIf(bool slow, std::function<void()> work) {
  if (slow) {
    slow_.Schedule(std::move(work));
  } else {
    work();
  }
}

absl::Status GrpcMasterService::ReleaseCallable(const ReleaseCallableRequest& request) {
  TG_ASSIGN_OR_RETURN(InUse master, Find(request.session_handle()));
  return master->ReleaseCallable(request.handle());
}

absl::Status GrpcMasterService::CloseSession(const CloseSessionRequest& request) {
  std::shared_ptr<Master> master;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(request.session_handle());
    if (it == sessions_.end()) {
      return errors::NotFound("no session with handle '", request.session_handle(), "'");
    }
    master = std::move(it->second.master);
    sessions_.erase(it);
  }
  // Outside the lock: Close makes calls to the workers (DeregisterGraph).
  return master->Close();
}

absl::Status GrpcMasterService::ListDevices(const ListDevicesRequest& request,
                                            ListDevicesResponse* response, absl::Time answer_by,
                                            const CancellationManager* cancellation) {
  InUse master;
  if (request.session_handle().empty()) {
    std::shared_ptr<Master> fresh = factory_(request.config());
    if (fresh == nullptr) return errors::Unavailable("this server runs no sessions");
    master = InUse(std::move(fresh), nullptr);
  } else {
    TG_ASSIGN_OR_RETURN(master, Find(request.session_handle()));
  }
  TG_ASSIGN_OR_RETURN(std::vector<DeviceInfo> devices,
                      master->ListDevices(answer_by, cancellation));
  for (const DeviceInfo& d : devices) {
    DeviceAttributesProto* out = DeviceNameUtils::IsSameAddressSpace(d.name, master->default_task())
                                     ? response->add_local_device()
                                     : response->add_remote_device();
    DeviceInfoToProto(d, out);
  }
  return absl::OkStatus();
}

absl::Status GrpcMasterService::Reset(const ResetRequest& request) {
  ConfigProto config;
  for (const std::string& f : request.device_filters()) config.add_device_filters(f);
  std::shared_ptr<Master> master = factory_(config);
  if (master == nullptr) return errors::Unavailable("this server runs no sessions");
  absl::flat_hash_map<std::string, Session> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  // Outside the lock, as in CloseSession. A session that fails to close
  // cleanly is gone from this master all the same.
  for (auto& [handle, session] : sessions) session.master->Close().IgnoreError();
  const std::vector<std::string> containers(request.container().begin(), request.container().end());
  return master->Reset(containers);
}

}  // namespace tensorgrid
