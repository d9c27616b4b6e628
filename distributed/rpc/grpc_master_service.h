// GrpcMasterService: tensorgrid.MasterService, one Master per client session,
// served through a task's GrpcFrontDoor (grpc_front_door.h), which checks the
// token, the request's size and its arrival before any method here runs.
// The server decides which workers a session's master drives: it passes a
// factory that builds a Master for a session's ConfigProto.
//
//   Worker worker("/job:localhost/replica:0/task:0", ConfigProto());
//   GrpcFrontDoor door{GrpcFrontDoor::Options()};
//   GrpcMasterService service([&](const ConfigProto& config) {
//     return std::make_unique<Master>(config, &worker, "/job:localhost/replica:0/task:0");
//   }, &door);
//   door.RegisterOn(&builder);
//
// CreateSession answers with a random handle that names the session in every
// later call; an unknown handle is NotFound naming it. Feeds arrive named by
// tensor ("x" or "x:0"); a feed whose TensorProto does not decode is
// InvalidArgument naming it. Master statuses cross the wire unchanged.
// ListDevices lists the session's devices (local_device: those of the
// master's own task, remote_device: the others); with no handle, those a new
// session with the request's config would see. Reset, as in TensorFlow,
// closes every session of this master, then clears the named resource
// containers (all of them if none is named) on every task matching the
// request's device_filters.
//
// Thread-safe. RunStep and RunCallable run on gRPC's callback threads: a
// step holds no server thread while its partitions run, its answer goes out
// from the thread that finishes it, and a client that cancels the call or
// goes away cancels the step on every task at once. (The first RunStep of a
// signature builds it, which blocks on RegisterGraph calls, so that one runs
// on a small pool of this service's own, as does the copying of requests and
// answers of more than 1 MiB.) A step of the master's own task
// starts on that callback thread, as the worker's RunGraph does: kernels
// must never block waiting for an RPC (the asynchronous ones do not), since
// gRPC has only a few such threads. The other methods, which wait for other
// tasks, each run on a thread of their own.
// Steps of one session run concurrently (the Master allows it), and a step
// in flight keeps its Master alive across a concurrent CloseSession (the
// step then fails with FailedPrecondition, "session is closed").
//
// Sessions end when their client closes them, and also, so that a client
// that never does cannot make the task hold them for ever, when idle
// (no step in flight, no call) for Options::session_gc (TensorFlow's
// session_gc_seconds; off by default), and when Options::max_sessions are open
// and a new one is created (the least recently used among those idle for a
// minute or more). The client's next call on such a session is NotFound
// saying why.
//
// ServeStepsOn(bulk) serves RunStep and RunCallable on the task's bulk port
// too (distributed/transport/bulk_server.h), and CreateSession names that port: a session's
// steps then cost a plain TCP round trip instead of a gRPC call. There a
// step runs on the port's connection thread, and the client hanging up, or
// the port stopping, cancels it.
#ifndef TENSORGRID_DISTRIBUTED_RPC_GRPC_MASTER_SERVICE_H_
#define TENSORGRID_DISTRIBUTED_RPC_GRPC_MASTER_SERVICE_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/platform/env.h"
#include "core/runtime/master.h"
#include "distributed/transport/bulk_server.h"
#include "proto/master.pb.h"

namespace tensorgrid {

class GrpcCall;
class GrpcFrontDoor;

class GrpcMasterService final {
 public:
  // Builds the Master of a new session. The workers it drives must outlive
  // the service.
  using MasterFactory = std::function<std::unique_ptr<Master>(const ConfigProto& config)>;

  struct Options {
    // A session with no call and no step in flight for this long is closed
    // by the master. Zero: never (as TensorFlow's default).
    absl::Duration session_gc = absl::ZeroDuration();
    // The most sessions open at once. Creating one more closes the least
    // recently used session idle for `min_idle_to_evict` or more, or, when
    // there is none, is ResourceExhausted.
    int max_sessions = 1024;
    absl::Duration min_idle_to_evict = absl::Minutes(1);
  };
  // Serves tensorgrid.MasterService's methods through `door` (not owned),
  // before its server starts; the service must outlive that server.
  GrpcMasterService(MasterFactory factory, GrpcFrontDoor* door)
      : GrpcMasterService(std::move(factory), door, Options()) {}
  GrpcMasterService(MasterFactory factory, GrpcFrontDoor* door, const Options& options);
  // Closes every session still open. Destroy the service after its server's
  // Shutdown, and after Stop of the bulk port it serves on.
  ~GrpcMasterService();

  GrpcMasterService(const GrpcMasterService&) = delete;
  GrpcMasterService& operator=(const GrpcMasterService&) = delete;

  // Serves RunStep and RunCallable on `bulk` as well, whose token must be
  // the door's. Call before the gRPC server starts.
  void ServeStepsOn(BulkServer* bulk);

  // A session's Master as one call holds it. The call marks the session
  // busy (never closed as idle, never evicted) until Done() or its end; a
  // step calls Done() before its answer goes out, so that a client holding
  // its answer finds its session idle. The Master itself stays held: a step
  // in flight outlives CloseSession.
  class InUse {
   public:
    InUse() = default;
    // `calls`: the session's count of calls in flight, which this one is
    // part of until Done(); null for a Master of no session.
    InUse(std::shared_ptr<Master> master, std::shared_ptr<std::atomic<int>> calls);
    InUse(InUse&& other) = default;
    InUse& operator=(InUse&& other);
    ~InUse() { Done(); }

    Master* operator->() const { return master_.get(); }
    void Done();

   private:
    std::shared_ptr<Master> master_;
    std::shared_ptr<std::atomic<int>> calls_;
  };

 private:
  void AddMethods(GrpcFrontDoor* door);
  // `answer_by`: the client's deadline; `cancellation`: cancelled when the
  // client goes away (Master::Create).
  absl::Status CreateSession(const CreateSessionRequest& request, CreateSessionResponse* response,
                             absl::Time answer_by, const CancellationManager* cancellation);
  absl::Status ExtendSession(const ExtendSessionRequest& request, absl::Time answer_by,
                             const CancellationManager* cancellation);
  absl::Status MakeCallable(const MakeCallableRequest& request, MakeCallableResponse* response);
  absl::Status ReleaseCallable(const ReleaseCallableRequest& request);
  absl::Status CloseSession(const CloseSessionRequest& request);
  absl::Status ListDevices(const ListDevicesRequest& request, ListDevicesResponse* response,
                           absl::Time answer_by, const CancellationManager* cancellation);
  absl::Status Reset(const ResetRequest& request);

  // The session's Master, in use by the caller; the session counts as
  // used now.
  absl::StatusOr<InUse> Find(const std::string& handle);
  struct Session {
    std::shared_ptr<Master> master;
    absl::Time last_used;
    // Its calls in flight (InUse).
    std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  };
  // Moves the sessions idle for Options::session_gc out of sessions_ (at
  // most once a second), noting why, for the caller to close outside mu_.
  void CollectIdle(absl::Time now, std::vector<std::shared_ptr<Master>>* closing)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes room for one more session under Options::max_sessions, or says
  // why it cannot.
  absl::Status MakeRoom(absl::Time now, std::vector<std::shared_ptr<Master>>* closing)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes `it` from sessions_, remembering `why` for the client's next call.
  void Forget(absl::flat_hash_map<std::string, Session>::iterator it, std::string why,
              std::vector<std::shared_ptr<Master>>* closing) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Closes sessions the master ended, on slow_ (Close calls the workers).
  void CloseLater(std::vector<std::shared_ptr<Master>> closing);

  const MasterFactory factory_;
  const Options options_;
  int bulk_port_ = 0;  // set before serving
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Session> sessions_ ABSL_GUARDED_BY(mu_);
  absl::Time next_collection_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // Why recently ended sessions ended (the last kRememberEnded), by handle,
  // and their order.
  absl::flat_hash_map<std::string, std::string> ended_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> ended_order_ ABSL_GUARDED_BY(mu_);
  // Runs `work` on slow_ if `slow`, else here.
  void OffloadIf(bool slow, std::function<void()> work);
  // RunStep's and RunCallable's shared body over gRPC (Call: StepCall or
  // CallableCall, whose kMethod names the method), and over the bulk port.
  template <typename Call>
  void ServeStep(std::shared_ptr<GrpcCall> grpc_call);
  template <typename Call>
  void ServeStepOn(BulkServer* bulk);
  // Finds the call's session and unpacks its request.
  template <typename Call>
  absl::Status Open(Call& call);

  // What must not hold one of gRPC's few callback threads: building a
  // signature (RegisterGraph calls, whose answers need those threads) and
  // copying large feeds and fetches.
  ThreadPool slow_{2};
};

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_MASTER_SERVICE_H_
