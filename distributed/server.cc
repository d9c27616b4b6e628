#include "distributed/server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/platform/status.h"
#include "core/runtime/master.h"
#include "core/runtime/worker.h"
#include "distributed/rpc/grpc_front_door.h"
#include "distributed/rpc/grpc_master_service.h"
#include "distributed/rpc/grpc_remote_worker.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/rpc/grpc_worker_service.h"
#include "distributed/transport/bulk_server.h"
#include "grpcpp/grpcpp.h"

namespace tensorgrid {
namespace {

struct HostPort {
  std::string host;
  int port = 0;
};

// "host:port" or "[v6]:port". The ClusterSpec has validated the port; this
// only splits.
absl::StatusOr<HostPort> SplitAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  HostPort out;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &out.port)) {
    return errors::InvalidArgument("address '", address, "' is not host:port");
  }
  out.host = address.substr(0, colon);
  return out;
}

bool IsWildcard(const std::string& host) {
  return host == "0.0.0.0" || host == "::" || host == "[::]";
}

// TensorFlow's default collective group leader: the task itself when alone,
// else the chief, else worker 0.
std::string DefaultCollectiveGroupLeader(const ClusterSpec& cluster, const std::string& task) {
  if (cluster.AllTasks().size() <= 1) return task;
  if (cluster.HasJob("chief")) return TaskName("chief", 0);
  if (cluster.HasJob("master")) return TaskName("master", 0);  // Kubeflow's name for it
  if (cluster.HasJob("worker")) return TaskName("worker", 0);
  return task;
}

// getaddrinfo of `host` ("[v6]" without its brackets): empty when it
// resolves, else getaddrinfo's reason.
std::string ResolveError(const std::string& host) {
  std::string name = host;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']')
    name = name.substr(1, name.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(name.c_str(), nullptr, &hints, &found);
  if (rc == 0) {
    freeaddrinfo(found);
    return "";
  }
  return gai_strerror(rc);
}

// ServerOptions::bulk_port_offset, -1 read from $TG_BULK_PORT_OFFSET.
absl::StatusOr<int> BulkPortOffset(int option) {
  if (option >= 0) return option;
  const char* env = std::getenv("TG_BULK_PORT_OFFSET");
  if (env == nullptr || *env == '\0') return 0;
  int offset = 0;
  if (!absl::SimpleAtoi(env, &offset) || offset < 0 || offset > 65535) {
    return errors::InvalidArgument("TG_BULK_PORT_OFFSET='", env,
                                   "' is not a port offset (0 to 65535)");
  }
  return offset;
}

}  // namespace

absl::Status WaitUntilHostResolves(const std::string& host, absl::Duration timeout,
                                   const std::string& task) {
  // Digits and dots only: meant as an IPv4 address, which never starts to
  // resolve later (no DNS name is all digits).
  if (!host.empty() && host.find_first_not_of("0123456789.") == std::string::npos) {
    in_addr parsed;
    if (inet_pton(AF_INET, host.c_str(), &parsed) != 1) {
      return errors::InvalidArgument("server of ", task, ": its host '", host,
                                     "' is not an IPv4 address (four numbers 0..255 "
                                     "separated by dots)");
    }
  }
  const absl::Time start = absl::Now();
  absl::Time next_note = start + absl::Seconds(10);
  absl::Duration pause = absl::Milliseconds(50);
  for (;;) {
    const std::string why = ResolveError(host);
    if (why.empty()) return absl::OkStatus();
    const absl::Time now = absl::Now();
    if (now - start >= timeout) {
      return errors::Unavailable(
          "server of ", task, ": its host '", host, "' does not resolve (", why, ") after ",
          absl::FormatDuration(absl::Trunc(now - start, absl::Milliseconds(1))),
          " (the start-up timeout)");
    }
    if (now >= next_note) {
      std::fprintf(
          stderr,
          "tensorgrid: server of %s: still waiting after %s for host '%s' to resolve (%s)\n",
          task.c_str(), absl::FormatDuration(absl::Trunc(now - start, absl::Seconds(1))).c_str(),
          host.c_str(), why.c_str());
      next_note = now + absl::Seconds(10);
    }
    absl::SleepFor(std::min(pause, start + timeout - now));
    pause = std::min(pause * 2, absl::Seconds(1));
  }
}

absl::StatusOr<std::unique_ptr<Server>> Server::Create(const ClusterSpec& cluster,
                                                       const std::string& job, int task_index,
                                                       const ConfigProto& config,
                                                       const ServerOptions& options) {
  const std::string task = TaskName(job, task_index);
  absl::StatusOr<std::string> address = cluster.TaskAddress(job, task_index);
  if (!address.ok()) {
    return errors::InvalidArgument("creating the server of ", task, ": ",
                                   address.status().message());
  }
  TG_ASSIGN_OR_RETURN(HostPort own, SplitAddress(*address));
  std::string bind_host = options.bind_host.empty() ? own.host : options.bind_host;
  if (bind_host == "localhost") bind_host = "127.0.0.1";
  if (bind_host == "::") bind_host = "[::]";
  // Peers reach this task at its cluster entry, whatever it binds.
  std::string advertised_host = own.host == "localhost" ? "127.0.0.1" : own.host;
  return std::unique_ptr<Server>(new Server(cluster, task, std::move(bind_host),
                                            std::move(advertised_host), own.port, config, options));
}

Server::Server(const ClusterSpec& cluster, std::string task, std::string bind_host,
               std::string advertised_host, int port, const ConfigProto& config,
               const ServerOptions& options)
    : task_(std::move(task)),
      bind_host_(std::move(bind_host)),
      advertised_host_(std::move(advertised_host)),
      options_(options),
      config_(config),
      worker_(std::make_unique<Worker>(task_, config)),
      port_(port) {
  Master::WorkerMap workers{{task_, worker_.get()}};
  for (const ClusterSpec::Task& t : cluster.AllTasks()) {
    if (t.name == task_) continue;
    GrpcRemoteWorker::Options remote_options;
    remote_options.security = options.security;
    remote_options.task = t.name;
    remote_options.bulk_transfer = options.bulk_transfer;
    auto remote = std::make_unique<GrpcRemoteWorker>(t.address, remote_options);
    workers[t.name] = remote.get();
    remote_workers_[t.name] = std::move(remote);
  }
  // The map is fixed from here on, so lookups need no lock.
  worker_->SetWorkerLookup([workers](const std::string& name) -> WorkerInterface* {
    auto it = workers.find(name);
    return it == workers.end() ? nullptr : it->second;
  });
  std::vector<std::string> tasks;
  for (const ClusterSpec::Task& t : cluster.AllTasks()) tasks.push_back(t.name);
  worker_->SetCollectiveGroupLeader(config.collective_group_leader().empty()
                                        ? DefaultCollectiveGroupLeader(cluster, task_)
                                        : config.collective_group_leader(),
                                    std::move(tasks));
  GrpcFrontDoor::Options door_options;
  door_options.auth_token = options.security.auth_token;
  door_options.max_request_bytes = options.max_request_bytes;
  door_options.request_timeout = options.request_timeout;
  front_door_ = std::make_unique<GrpcFrontDoor>(door_options);
  master_service_ = std::make_unique<GrpcMasterService>(
      [workers, task = task_](const ConfigProto& session_config) {
        return std::make_unique<Master>(session_config, workers, task);
      },
      front_door_.get(), GrpcMasterService::Options{options.session_gc, options.max_sessions});
}

Server::~Server() {
  Stop();
  // gRPC's server first: nothing may call into the services or workers after.
  absl::MutexLock lock(&mu_);
  grpc_server_.reset();
}

absl::Status Server::Start() {
  // Before the lock: a host that does not resolve yet may take a while.
  if (!IsWildcard(bind_host_)) {
    absl::Status resolved = WaitUntilHostResolves(bind_host_, options_.resolve_timeout, task_);
    if (!resolved.ok()) return resolved;
  }
  absl::MutexLock lock(&mu_);
  if (state_ != State::kNew) {
    return errors::FailedPrecondition("server of ", task_, " was already ",
                                      state_ == State::kStarted ? "started" : "stopped");
  }
  const std::string address = absl::StrCat(bind_host_, ":", port_);
  if (options_.bulk_transfer && !options_.security.tls()) {
    // Without it every tensor still travels, inside gRPC's answers.
    BulkServer::Options bulk_options;
    bulk_options.token = options_.security.auth_token;
    bulk_options.task = task_;
    bulk_options.advertised_host = advertised_host_;
    // Calls in flight get the same time to finish as gRPC's at Stop.
    bulk_options.stop_grace = options_.stop_timeout;
    // As gRPC's: at most what one message can hold.
    bulk_options.max_call_bytes = options_.max_request_bytes > 0
                                      ? static_cast<size_t>(options_.max_request_bytes)
                                      : size_t{INT_MAX};
    TG_ASSIGN_OR_RETURN(const int offset, BulkPortOffset(options_.bulk_port_offset));
    if (offset > 0) {
      if (port_ <= 0 || port_ + offset > 65535) {
        return errors::InvalidArgument("server of ", task_, ": bulk port offset ", offset,
                                       " from gRPC port ", port_, " is not a port");
      }
      bulk_options.port = port_ + offset;
    }
    absl::StatusOr<std::unique_ptr<BulkServer>> bulk = BulkServer::Start(bind_host_, bulk_options);
    if (!bulk.ok() && offset > 0) {
      return errors::Unavailable("server of ", task_, ": ", bulk.status().message(),
                                 " (its gRPC port ", port_, " + bulk port offset ", offset, ")");
    }
    if (bulk.ok()) {
      bulk_ = *std::move(bulk);  // the services serve RecvBuf, RunGraph and steps there
    } else {
      std::fprintf(stderr, "tensorgrid: server of %s: %s; large tensors go over gRPC\n",
                   task_.c_str(), std::string(bulk.status().message()).c_str());
    }
  }
  worker_service_ =
      std::make_unique<GrpcWorkerService>(worker_.get(), front_door_.get(), bulk_.get());
  if (bulk_ != nullptr) master_service_->ServeStepsOn(bulk_.get());  // same token
  grpc::ServerBuilder builder;
  int selected_port = 0;
  builder.AddListeningPort(address, ServerCredentials(options_.security), &selected_port);
  // Fetched tensors may be large: allow the most a gRPC message can hold.
  builder.SetMaxSendMessageSize(INT_MAX);
  // gRPC sets SO_REUSEPORT by default, which would let a second server share
  // the port silently; a port in use must be an error instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  front_door_->RegisterOn(&builder);  // the receive limit too
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || selected_port == 0) {
    if (server != nullptr) server->Shutdown();
    if (bulk_ != nullptr) bulk_->Stop();
    return errors::Unavailable("server of ", task_, " cannot listen on ", address,
                               ": the port is in use or the host is not this machine's");
  }
  grpc_server_ = std::move(server);
  port_ = selected_port;
  state_ = State::kStarted;
  return absl::OkStatus();
}

void Server::Stop() {
  absl::MutexLock stop_lock(&stop_mu_);
  grpc::Server* server = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kNew) state_ = State::kStopped;
    if (state_ == State::kStopped) return;
    server = grpc_server_.get();
  }
  // What peers still pull from here goes first: a MultiWorkerMirrored
  // worker that finished its last all-reduce may stop before its peer took
  // this worker's part of it (bounded by stop_timeout).
  if (!worker_->WaitForCollectivePeers(absl::Now() + options_.stop_timeout)) {
    std::fprintf(stderr, "task %s: stopping with collective chunks no peer took within %s\n",
                 task_.c_str(), absl::FormatDuration(options_.stop_timeout).c_str());
  }
  // Steps in flight here fail now, with a reason, rather than run on until
  // gRPC's shutdown deadline cancels their calls; the tasks they exchange
  // tensors with learn it through their receives.
  worker_->Shutdown(errors::Aborted("task ", task_, " is shutting down"));
  // Without mu_: handlers still running may need address() and the like.
  const absl::Time deadline = absl::Now() + options_.stop_timeout;
  server->Shutdown(absl::ToChronoTime(deadline));
  server->Wait();
  // No call can hand out a ticket now; fetches in flight fail on the peers.
  // Steps on the bulk port are cancelled and waited for, as gRPC's were
  // (bulk_ is set once, by Start; without mu_, which address() and the like
  // take meanwhile).
  if (bulk_ != nullptr) bulk_->Stop();
  absl::MutexLock lock(&mu_);
  state_ = State::kStopped;
}

void Server::Join() {
  absl::MutexLock lock(&mu_);
  if (state_ == State::kNew) return;
  mu_.Await(absl::Condition(
      +[](State* state) { return *state == State::kStopped; }, &state_));
}

int Server::bulk_port() const {
  absl::MutexLock lock(&mu_);
  return bulk_ != nullptr && state_ == State::kStarted ? bulk_->port() : 0;
}

int64_t Server::BulkCount(int64_t (BulkServer::*count)() const) const {
  absl::MutexLock lock(&mu_);
  return bulk_ != nullptr ? (bulk_.get()->*count)() : 0;
}

int64_t Server::bulk_fetches() const { return BulkCount(&BulkServer::fetches); }

int64_t Server::bulk_calls() const { return BulkCount(&BulkServer::calls); }

int64_t Server::bulk_calls_in_process() const { return BulkCount(&BulkServer::calls_in_process); }

int64_t Server::bulk_tensor_batches() const { return BulkCount(&BulkServer::tensor_batches); }

std::string Server::address() const {
  absl::MutexLock lock(&mu_);
  return absl::StrCat(advertised_host_, ":", port_);
}

}  // namespace tensorgrid
