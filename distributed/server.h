// Server: one task of a cluster, serving tensorgrid.WorkerService (its own
// Worker) and tensorgrid.MasterService (a Master per client session that
// drives every task of the cluster) on the task's one port.
//
//   TG_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpec::FromFlag(
//       "ps=localhost:2222;worker=localhost:2223,localhost:2224"));
//   TG_ASSIGN_OR_RETURN(auto server, Server::Create(cluster, "worker", 0, ConfigProto()));
//   TG_RETURN_IF_ERROR(server->Start());   // binds 127.0.0.1:2223
//   // clients: NewSession({.target = server->target()}) == "grpc://127.0.0.1:2223"
//   server->Stop();                        // or Join() from a thread that waits
//
// Binding: the host of the task's own cluster entry ("localhost" binds the
// loopback address 127.0.0.1 only) unless ServerOptions::bind_host says
// otherwise ("0.0.0.0" on a real host); address() is always the cluster
// entry's host (127.0.0.1 for "localhost"), as the peers know it. Port 0
// picks a free port, which address() and target() report once Start has
// succeeded. The other tasks are reached at their cluster
// addresses, as GrpcRemoteWorkers; a tensor this task sends to itself stays
// in process.
//
// Lifetime: Create -> Start -> Stop (graceful: new calls are refused, steps
// running on this task fail at once with Aborted "task ... is shutting
// down", other calls in flight get ServerOptions::stop_timeout to finish and
// are cancelled after it). Join blocks until the server is stopped. Stop and Join are
// idempotent, thread-safe and may race; the destructor stops the server.
#ifndef TENSORGRID_DISTRIBUTED_SERVER_H_
#define TENSORGRID_DISTRIBUTED_SERVER_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/cluster_spec.h"
#include "distributed/rpc_security.h"
#include "proto/config.pb.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace tensorgrid {

class BulkServer;
class GrpcFrontDoor;
class GrpcMasterService;
class GrpcRemoteWorker;
class GrpcWorkerService;
class Worker;

struct ServerOptions {
  // The host to bind, for the gRPC port and the bulk port alike. Empty: the
  // host of the task's own cluster entry, with "localhost" meaning
  // 127.0.0.1. "0.0.0.0" ("::" or "[::]" for IPv6 too) listens on every
  // interface. Whatever it binds, a task is known to its peers (and
  // address() reports it) by its cluster entry.
  std::string bind_host;
  // How long Start waits for a bind host that does not resolve yet (a
  // Kubernetes pod's own name before its headless service lists it),
  // retrying, before it fails with Unavailable naming the host.
  absl::Duration resolve_timeout = absl::Seconds(60);
  // How long Stop lets calls in flight finish before cancelling them.
  absl::Duration stop_timeout = absl::Seconds(5);
  // Auth token and TLS, for this server's port and for its calls to the
  // other tasks (which must all use the same).
  RpcSecurity security;
  // The largest request the server accepts; larger ones are refused with
  // ResourceExhausted (by gRPC, once it has received them: only callers
  // that hold the token, if there is one, get that far). Feeds travel in
  // requests.
  int max_request_bytes = 1 << 30;
  // How long a request may take to arrive whole from its call's start;
  // one that has not is answered DeadlineExceeded and its stream reset.
  // Zero: as long as the client's deadline.
  absl::Duration request_timeout = absl::Seconds(60);
  // A second port of this server's, a plain TCP one the kernel picks on the
  // same host (docs/bulk_transfer.md): large received tensors travel there
  // by ticket, and RunGraph and collective chunks go there directly. Off, or
  // with TLS, all of it goes over gRPC. A peer that cannot reach the port
  // falls back to gRPC by itself.
  bool bulk_transfer = true;
  // Where the bulk port is, for firewalls: the task's gRPC port plus this
  // (2222 and 1000: 3222), and Start fails if it cannot have it. 0: a port
  // the kernel picks. -1 (the default): $TG_BULK_PORT_OFFSET, else 0.
  int bulk_port_offset = -1;
  // Client sessions the task's master closes by itself: those idle (no call,
  // no step) for `session_gc` (zero: never, TensorFlow's default), and, when
  // `max_sessions` are open and one more is created, the least recently
  // used of those idle for a minute (GrpcMasterService::Options).
  absl::Duration session_gc = absl::ZeroDuration();
  int max_sessions = 1024;
};

// Returns once `host` resolves, or Unavailable naming it (and `task`)
// after `timeout`; says on stderr every 10 s that it is still waiting.
// InvalidArgument at once for digits and dots that are no IPv4 address.
absl::Status WaitUntilHostResolves(const std::string& host, absl::Duration timeout,
                                   const std::string& task);

class Server {
 public:
  // The server of task `task_index` of `job`; `config` configures its Worker
  // (devices, thread pools). InvalidArgument if the cluster has no such
  // task or its address does not parse. Binds nothing yet.
  static absl::StatusOr<std::unique_ptr<Server>> Create(const ClusterSpec& cluster,
                                                        const std::string& job, int task_index,
                                                        const ConfigProto& config,
                                                        const ServerOptions& options = {});
  ~Server();

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts serving. Unavailable naming the address when it cannot
  // be bound (a port in use, a host that is not this machine's);
  // FailedPrecondition if called twice or after Stop.
  absl::Status Start();
  // Graceful shutdown, bounded by ServerOptions::stop_timeout. Harmless
  // before Start and when already stopped.
  void Stop();
  // Blocks until Stop has finished (returns at once if never started).
  void Join();

  // "/job:worker/replica:0/task:0"
  const std::string& task() const { return task_; }
  // What configures its Worker: devices (device_count, GPU options) and
  // their threads (intra_op_parallelism_threads), as given to Create.
  const ConfigProto& config() const { return config_; }
  // "host:port", the real port once started.
  std::string address() const;
  // "grpc://" + address(), for SessionOptions::target.
  std::string target() const { return "grpc://" + address(); }
  // The bulk transfer port once started; 0 when there is none.
  int bulk_port() const;
  // How many tensors peers have fetched from it so far.
  int64_t bulk_fetches() const;
  // How many calls (steps, RunGraph) it served, and how many of those came
  // from this process with no socket (docs/bulk_transfer.md).
  int64_t bulk_calls() const;
  int64_t bulk_calls_in_process() const;
  // How many requests for several tensors of a step at once it served
  // (BulkServer::tensor_batches).
  int64_t bulk_tensor_batches() const;

 private:
  // `count` of the bulk port; 0 when there is none.
  int64_t BulkCount(int64_t (BulkServer::*count)() const) const;
  Server(const ClusterSpec& cluster, std::string task, std::string bind_host,
         std::string advertised_host, int port, const ConfigProto& config,
         const ServerOptions& options);

  const std::string task_;
  const std::string bind_host_;        // what the listening socket binds
  const std::string advertised_host_;  // what address() reports
  const ServerOptions options_;
  const ConfigProto config_;

  std::unique_ptr<Worker> worker_;
  // The other tasks, by task name.
  std::map<std::string, std::unique_ptr<GrpcRemoteWorker>> remote_workers_;
  std::unique_ptr<BulkServer> bulk_;  // made by Start; outlives the services
  // Every call of the port comes in through the door: it checks the token,
  // then hands the call to a method of the services.
  std::unique_ptr<GrpcFrontDoor> front_door_;
  std::unique_ptr<GrpcWorkerService> worker_service_;  // made by Start
  std::unique_ptr<GrpcMasterService> master_service_;

  mutable absl::Mutex mu_;
  enum class State { kNew, kStarted, kStopped };
  State state_ ABSL_GUARDED_BY(mu_) = State::kNew;
  int port_ ABSL_GUARDED_BY(mu_);  // the cluster's until Start, then the real one
  // Set by Start; shut down (never reset) by Stop, so Join can still Wait on it.
  std::unique_ptr<grpc::Server> grpc_server_ ABSL_GUARDED_BY(mu_);
  absl::Mutex stop_mu_;  // serializes Stop so a second caller waits for the first
};

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_SERVER_H_
