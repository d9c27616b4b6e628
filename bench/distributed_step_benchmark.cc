// Latency of a distributed null step, against a raw gRPC ping-pong timed by
// the same binary on the same machine at the same time.
//
//   this process                 child: /job:worker/task:0     child: /job:ps/task:0
//   GrpcSession ───RunStep────►  master ────RunGraph─────────►  v (float scalar Variable)
//               ◄──── v ───────         ◄──── v ─────────────
//
//   this process ───Echo (4 bytes)───► child: EchoService      (the reference)
//   this process ───Echo───► child: relay ───Echo───► child: EchoService
//                                    (sync stub, or callback API + wait)
//
// Every task is a separate process: the tasks run distributed::Server exactly
// as tg_server does (default ConfigProto), forked from this binary before it
// starts any thread, on loopback ports picked free just before; the echo
// server picks its own port. With TG_BULK_TRANSFER=0 the tasks open no bulk
// port, so steps take gRPC all the way. Children stop on SIGTERM when the benchmarks
// end, and get SIGTERM from the kernel if this process dies first.
//
// Rows:
//   BM_GrpcPingPong             one unary EchoService.Echo: a fresh
//                               ClientContext with a deadline, 4 bytes each way
//   BM_GrpcRelay                the same call to a relay process whose handler
//                               makes it again (sync stub) to the echo server:
//                               what two raw gRPC hops in a row cost here
//   BM_GrpcRelayCallback        the relay forwarding with gRPC's callback API
//                               and a Notification wait instead, as the master
//                               reaches a remote worker (GrpcRemoteWorker)
//   BM_NullStep_SessionRun      Session::Run fetching "v:0" on a grpc:// session
//                               whose master is worker 0
//   BM_NullStep_RunCallable     the same step as a callable (no name lookups)
//   BM_NullStep_MasterOnPs      the callable on a session whose master is the
//                               ps itself: one RPC instead of two, to tell the
//                               master's own cost from the second hop's
//   BM_NullStep_OwnProcess      the callable on a grpc:// session whose master
//                               is a one-task server in this very process, as
//                               a MultiWorkerMirrored worker's is: no socket at
//                               all (the bulk port's in-process calls); with
//                               TG_BULK_IN_PROCESS=0, one loopback round trip
//                               (bench/run.sh runs it both ways)
//   BM_ReadVariables/N          a callable on the worker-0 session whose step
//                               reads N float scalar variables from the ps
//                               (N transfers) and fetches their AddN: what
//                               each variable a step reads from a ps costs
//
// --worker_target=grpc://H:P --ps_target=grpc://H:P (both, first on the
// command line) use tasks already running instead of the two children (a
// cluster ps=...;worker=...; bench/run_netns.sh runs them on network-namespace
// hosts); the echo rows still measure children of this process.
//
// A null step needs at least two round trips in a row (client -> master,
// master -> ps), so about 2x the ping-pong (or BM_GrpcRelay) is the floor;
// the goal is 3x the ping-pong. See docs/PERFORMANCE.md for the results.
// See also bench/report.py.
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "bench/child_process.h"
#include "bench/echo.grpc.pb.h"
#include "client/ops/standard_ops.h"
#include "client/scope.h"
#include "core/platform/free_port.h"
#include "core/public/session.h"
#include "distributed/cluster_spec.h"
#include "distributed/server.h"

namespace tensorgrid {
namespace {

using bench::AwaitReady;
using bench::CheckOk;
using bench::Child;
using bench::Die;
using bench::Report;
using bench::Spawn;
using bench::StopChildren;

// How long the children get to start serving.
constexpr std::chrono::seconds kStartupTimeout(30);
// Every RPC of the reference gets a deadline, as the session's do.
constexpr std::chrono::seconds kCallTimeout(10);

// ---- the cluster and the echo server --------------------------------------------

// One task of `cluster`, as tg_server runs it (TG_BULK_TRANSFER=0 turns
// its bulk port off, as tg_server's: steps then go over gRPC).
void ServeTask(const ClusterSpec& cluster, const std::string& job, int report_fd,
               const sigset_t& signals) {
  ServerOptions options;
  const char* bulk = std::getenv("TG_BULK_TRANSFER");
  options.bulk_transfer =
      bulk == nullptr || (std::string(bulk) != "0" && std::string(bulk) != "false");
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Create(cluster, job, 0, ConfigProto(), options);
  absl::Status status = server.ok() ? (*server)->Start() : server.status();
  if (!status.ok()) {
    Report(report_fd, "error " + status.ToString());
    _exit(1);
  }
  Report(report_fd, "ready " + (*server)->address());
  int signal = 0;
  sigwait(&signals, &signal);
  (*server)->Stop();
}

// Answers with the request's payload; with `forward` set, the answer is
// what the echo server at `forward` says to the same request, asked through
// a blocking call or (with `callback_api`) stub->async() and a wait.
class EchoService final : public bench::EchoService::Service {
 public:
  EchoService(const std::string& forward, bool callback_api) : callback_api_(callback_api) {
    if (!forward.empty()) {
      next_ = bench::EchoService::NewStub(
          grpc::CreateChannel(forward, grpc::InsecureChannelCredentials()));
    }
  }

 private:
  grpc::Status Echo(grpc::ServerContext*, const bench::EchoMessage* request,
                    bench::EchoMessage* response) override {
    if (next_ == nullptr) {
      response->set_payload(request->payload());
      return grpc::Status::OK;
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kCallTimeout);
    if (!callback_api_) return next_->Echo(&context, *request, response);
    grpc::Status status;
    absl::Notification done;
    next_->async()->Echo(&context, request, response, [&](grpc::Status s) {
      status = std::move(s);
      done.Notify();
    });
    done.WaitForNotification();
    return status;
  }

  const bool callback_api_;
  std::unique_ptr<bench::EchoService::Stub> next_;
};

// A plain synchronous gRPC server with EchoService on a free loopback port.
void ServeEcho(const std::string& forward, bool callback_api, int report_fd,
               const sigset_t& signals) {
  EchoService service(forward, callback_api);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    Report(report_fd, "error the echo server cannot listen on 127.0.0.1:0");
    _exit(1);
  }
  Report(report_fd, absl::StrCat("ready 127.0.0.1:", port));
  int signal = 0;
  sigwait(&signals, &signal);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

struct Processes {
  std::vector<Child> children;  // ps, worker, echo server, relays (sync, callback)
  std::string ps_target, worker_target, echo_address, relay_address, callback_relay_address;
};
Processes* processes = nullptr;

// Starts the five children (three when the targets are given) and waits
// until all serve. Call it while this process has a single thread: a fork
// copies only the calling thread.
void StartProcesses(Processes* out) {
  if (!out->worker_target.empty()) {
    out->children.push_back(Spawn(
        "echo server", [](int fd, const sigset_t& signals) { ServeEcho("", false, fd, signals); }));
    AwaitReady(out->children.back(), std::chrono::steady_clock::now() + kStartupTimeout);
    out->echo_address = out->children.back().address;
    for (const bool callback_api : {false, true}) {
      out->children.push_back(Spawn(callback_api ? "callback relay" : "echo relay",
                                    [&](int fd, const sigset_t& signals) {
                                      ServeEcho(out->echo_address, callback_api, fd, signals);
                                    }));
      AwaitReady(out->children.back(), std::chrono::steady_clock::now() + kStartupTimeout);
    }
    out->relay_address = out->children[1].address;
    out->callback_relay_address = out->children[2].address;
    return;
  }
  // Another program could take a port before its task binds it; the run then
  // fails naming the task (run it again).
  const std::vector<int> ports = FreePorts(2);
  if (ports.empty()) Die("cannot pick 2 free loopback ports");
  absl::StatusOr<ClusterSpec> cluster = ClusterSpec::FromFlag(
      absl::StrCat("ps=localhost:", ports[0], ";worker=localhost:", ports[1]));
  CheckOk(cluster.status(), "cluster");
  for (const std::string job : {"ps", "worker"}) {
    out->children.push_back(Spawn(TaskName(job, 0), [&](int fd, const sigset_t& signals) {
      ServeTask(*cluster, job, fd, signals);
    }));
  }
  out->children.push_back(Spawn(
      "echo server", [](int fd, const sigset_t& signals) { ServeEcho("", false, fd, signals); }));
  const auto deadline = std::chrono::steady_clock::now() + kStartupTimeout;
  for (Child& child : out->children) AwaitReady(child, deadline);
  // The relays need the echo server's port, so they start once that is known.
  const std::string echo = out->children[2].address;
  for (const bool callback_api : {false, true}) {
    out->children.push_back(Spawn(
        callback_api ? "callback relay" : "echo relay",
        [&](int fd, const sigset_t& signals) { ServeEcho(echo, callback_api, fd, signals); }));
    AwaitReady(out->children.back(), deadline);
  }
  out->ps_target = "grpc://" + out->children[0].address;
  out->worker_target = "grpc://" + out->children[1].address;
  out->echo_address = echo;
  out->relay_address = out->children[3].address;
  out->callback_relay_address = out->children[4].address;
}

// ---- the benchmarks -------------------------------------------------------------

void EchoCalls(benchmark::State& state, const std::string& address) {
  auto stub =
      bench::EchoService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  bench::EchoMessage request, response;
  request.set_payload(std::string(sizeof(float), '\1'));  // as big as the fetched scalar
  auto call = [&] {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kCallTimeout);
    return stub->Echo(&context, request, &response);
  };
  const grpc::Status warm_up = call();  // connects (the relay: both hops)
  if (!warm_up.ok()) Die("echo at " + address + ": " + warm_up.error_message());
  for (auto _ : state) {
    const grpc::Status status = call();
    if (!status.ok()) state.SkipWithError(status.error_message().c_str());
  }
}

void BM_GrpcPingPong(benchmark::State& state) { EchoCalls(state, processes->echo_address); }
void BM_GrpcRelay(benchmark::State& state) { EchoCalls(state, processes->relay_address); }
void BM_GrpcRelayCallback(benchmark::State& state) {
  EchoCalls(state, processes->callback_relay_address);
}

// A grpc:// session on `target` whose graph is one float scalar Variable
// "v" on /job:ps/task:0, initialized to 1.
std::unique_ptr<Session> NullStepSession(const std::string& target) {
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  auto v = ops::Variable(ps.WithOpName("v"), {}, DT_FLOAT);
  ops::Assign(ps.WithOpName("v/Assign"), v, ops::Const(ps.WithOpName("one"), 1.f));
  GraphDef graph;
  CheckOk(root.ToGraphDef(&graph), "building the graph");
  SessionOptions options;
  options.target = target;
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options);
  CheckOk(session.status(), "NewSession " + target);
  CheckOk((*session)->Create(graph), "Create on " + target);
  CheckOk((*session)->Run({}, {}, {"v/Assign"}, nullptr), "initializing v on " + target);
  return std::move(session).value();
}

void BM_NullStep_SessionRun(benchmark::State& state) {
  std::unique_ptr<Session> session = NullStepSession(processes->worker_target);
  std::vector<Tensor> out;
  CheckOk(session->Run({}, {"v:0"}, {}, &out), "warm-up step");  // places and registers
  for (auto _ : state) {
    const absl::Status status = session->Run({}, {"v:0"}, {}, &out);
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
    benchmark::DoNotOptimize(out.data());
  }
}

void RunCallableSteps(benchmark::State& state, const std::string& target) {
  std::unique_ptr<Session> session = NullStepSession(target);
  CallableOptions options;
  options.add_fetch("v:0");
  absl::StatusOr<Session::CallableHandle> handle = session->MakeCallable(options);
  CheckOk(handle.status(), "MakeCallable");
  std::vector<Tensor> out;
  CheckOk(session->RunCallable(*handle, {}, &out, nullptr), "warm-up step");
  for (auto _ : state) {
    const absl::Status status = session->RunCallable(*handle, {}, &out, nullptr);
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
    benchmark::DoNotOptimize(out.data());
  }
}

void BM_NullStep_RunCallable(benchmark::State& state) {
  RunCallableSteps(state, processes->worker_target);
}
void BM_NullStep_MasterOnPs(benchmark::State& state) {
  RunCallableSteps(state, processes->ps_target);
}

void BM_NullStep_OwnProcess(benchmark::State& state) {
  // A cluster of one task, "ps" (NullStepSession's graph lives there), served
  // by this process; started once, after the children were forked.
  static Server* own = [] {
    absl::StatusOr<ClusterSpec> cluster =
        ClusterSpec::FromFlag(absl::StrCat("ps=127.0.0.1:", FreePorts(1)[0]));
    CheckOk(cluster.status(), "the own cluster");
    absl::StatusOr<std::unique_ptr<Server>> server =
        Server::Create(*cluster, "ps", 0, ConfigProto());
    CheckOk(server.status(), "the own server");
    CheckOk((*server)->Start(), "starting the own server");
    return server->release();  // serves until the process exits
  }();
  RunCallableSteps(state, own->target());
}

// A step of a worker reading N float scalar variables from the ps: the
// callable fetches AddN of them, computed on the worker (N transfers from
// the ps in one step, as a model's variables are read at a step's start).
void BM_ReadVariables(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope worker = root.WithDevice("/job:worker/task:0");
  std::vector<Output> reads;
  std::vector<std::string> inits;
  for (int i = 0; i < n; ++i) {
    auto v = ops::Variable(ps.WithOpName(absl::StrCat("v", i)), {}, DT_FLOAT);
    inits.push_back(absl::StrCat("v", i, "/Assign"));
    ops::Assign(ps.WithOpName(inits.back()), v, ops::Const(ps, 1.f));
    reads.push_back(ops::Identity(worker, v));
  }
  ops::AddN(worker.WithOpName("sum"), reads);
  GraphDef graph;
  CheckOk(root.ToGraphDef(&graph), "building the graph");
  SessionOptions options;
  options.target = processes->worker_target;
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options);
  CheckOk(session.status(), "NewSession");
  CheckOk((*session)->Create(graph), "Create");
  CheckOk((*session)->Run({}, {}, inits, nullptr), "initializing");
  CallableOptions callable;
  callable.add_fetch("sum:0");
  absl::StatusOr<Session::CallableHandle> handle = (*session)->MakeCallable(callable);
  CheckOk(handle.status(), "MakeCallable");
  std::vector<Tensor> out;
  CheckOk((*session)->RunCallable(*handle, {}, &out, nullptr), "warm-up step");
  if (out.size() != 1 || out[0].scalar<float>() != static_cast<float>(n)) Die("wrong sum");
  for (auto _ : state) {
    const absl::Status status = (*session)->RunCallable(*handle, {}, &out, nullptr);
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
  }
}

// The work happens in other processes, so wall time is what counts.
#define TG_RPC_BENCHMARK(fn)          \
  BENCHMARK(fn)                       \
      ->UseRealTime()                 \
      ->Unit(benchmark::kMicrosecond) \
      ->Repetitions(9)                \
      ->ReportAggregatesOnly(true)

TG_RPC_BENCHMARK(BM_GrpcPingPong);
TG_RPC_BENCHMARK(BM_GrpcRelay);
TG_RPC_BENCHMARK(BM_GrpcRelayCallback);
TG_RPC_BENCHMARK(BM_NullStep_SessionRun);
TG_RPC_BENCHMARK(BM_NullStep_RunCallable);
TG_RPC_BENCHMARK(BM_NullStep_MasterOnPs);
TG_RPC_BENCHMARK(BM_NullStep_OwnProcess);
TG_RPC_BENCHMARK(BM_ReadVariables)->Arg(1)->Arg(8)->Arg(32)->Arg(128);

}  // namespace
}  // namespace tensorgrid

int main(int argc, char** argv) {
  using tensorgrid::processes;
  tensorgrid::Processes children;
  // Ours first, then the benchmark library's.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--worker_target=", 0) == 0) {
      children.worker_target = arg.substr(arg.find('=') + 1);
    } else if (arg.rfind("--ps_target=", 0) == 0) {
      children.ps_target = arg.substr(arg.find('=') + 1);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (children.worker_target.empty() != children.ps_target.empty()) {
    std::fprintf(stderr, "distributed_step_benchmark: give both --worker_target and --ps_target\n");
    return 2;
  }
  benchmark::Initialize(&argc, argv);  // parses flags only: still one thread
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  processes = &children;
  tensorgrid::StartProcesses(processes);
  benchmark::RunSpecifiedBenchmarks();
  tensorgrid::StopChildren(children.children);
  return 0;
}
