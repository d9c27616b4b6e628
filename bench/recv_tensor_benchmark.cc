// Throughput of RecvTensor between two processes on loopback, against a
// plain TCP stream and a plain gRPC call moving the same bytes, all timed by
// this binary in the same run.
//
//   this process                              child: tg_server's Server, /job:worker/task:0
//   GrpcRemoteWorker ──RunGraph(step)──────►  Const (float32, N bytes) ──► _Send
//                    ──RecvTensor(step)────►  GrpcWorkerService
//                    ◄═══ N bytes ══════════    (the tensor's buffer, referenced)
//
//   this process                              child: reference server
//   TCP socket ──"N"──────────────────────►   write(N bytes) on one connection
//   BytesService.Get ──────────────────────►  a plain protobuf `bytes` field of N bytes
//
// Rows (N = 4 KiB and 64 MiB; GB/s as bytes_per_second, 1 GB = 1e9 bytes):
//   BM_RecvTensor/bytes:N    one RecvTensor through GrpcRemoteWorker, decoded
//                            into a fresh tensor. Each iteration first runs a
//                            step on the child (RunGraph: the Const's tensor
//                            goes into the step's rendezvous) and cleans it up
//                            after; only the RecvTensor call is timed.
//                            The receiver asks the worker's bulk port
//                            directly once it knows it (from the first
//                            RunGraph on; distributed/transport/),
//                            with no gRPC call; loopback reads of 64 KiB or more are
//                            copied out of the worker's memory.
//   BM_RecvTensorInGrpc/bytes:N  the same with the bytes inside gRPC's
//                            answer (GrpcRemoteWorker::Options::bulk_transfer
//                            off): zero-copy encoding, one decode copy
//   BM_TcpStream/bytes:N     the physical yardstick: the child writes N bytes
//                            from memory to a connected loopback socket, we
//                            read them into one reused buffer (8 bytes of
//                            request first, timed too)
//   BM_GrpcBytesField/bytes:N  the plain gRPC way: a sync unary call whose
//                            response message holds N bytes in a `bytes`
//                            field (the server copies them into the message,
//                            protobuf serializes and parses)
//
// The worker is distributed::Server exactly as tg_server runs it (default
// ConfigProto), forked before this process starts any thread. Children stop
// on SIGTERM when the benchmarks end and get SIGTERM from the kernel if this
// process dies first. Goal: RecvTensor at 64 MiB >= 70% of the TCP stream's
// GB/s. See docs/PERFORMANCE.md and bench/report.py.
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/bytes_service.grpc.pb.h"
#include "bench/child_process.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/rendezvous.h"
#include "core/framework/tensor.h"
#include "core/platform/blocking.h"
#include "distributed/cluster_spec.h"
#include "distributed/rpc/grpc_remote_worker.h"
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

constexpr char kWorkerCpu[] = "/job:worker/replica:0/task:0/device:CPU:0";
// The nominal receiver named in the rendezvous key (this process).
constexpr char kReceiverCpu[] = "/job:worker/replica:0/task:1/device:CPU:0";
constexpr int64_t kLargest = int64_t{64} << 20;
constexpr std::chrono::seconds kStartupTimeout(30);
constexpr std::chrono::seconds kCallTimeout(30);

// ---- the worker child -----------------------------------------------------------

// One task, as tg_server runs it, on a free loopback port.
void ServeWorker(int report_fd, const sigset_t& signals) {
  ClusterSpecOptions options;
  options.allow_port_zero = true;  // the server picks a free port and reports it
  absl::StatusOr<ClusterSpec> cluster = ClusterSpec::FromFlag("worker=localhost:0", options);
  absl::StatusOr<std::unique_ptr<Server>> server =
      cluster.ok() ? Server::Create(*cluster, "worker", 0, ConfigProto())
                   : absl::StatusOr<std::unique_ptr<Server>>(cluster.status());
  absl::Status status = server.ok() ? (*server)->Start() : server.status();
  if (!status.ok()) {
    Report(report_fd, "error " + status.ToString());
    return;
  }
  Report(report_fd, "ready " + (*server)->address());
  int signal = 0;
  sigwait(&signals, &signal);
  (*server)->Stop();
}

// ---- the reference child: a TCP stream and a plain gRPC call --------------------

// Bytes every reference answer is cut from, the size of the largest.
const std::string& Payload() {
  static const std::string* payload = new std::string(kLargest, '\x5a');
  return *payload;
}

bool ReadFully(int fd, char* data, size_t n) {
  while (n > 0) {
    const ssize_t got = recv(fd, data, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    data += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool WriteFully(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t sent = send(fd, data, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    data += sent;
    n -= static_cast<size_t>(sent);
  }
  return true;
}

// Per connection: read an 8-byte size, write that many payload bytes; again.
void ServeStream(int fd) {
  int64_t size = 0;
  while (ReadFully(fd, reinterpret_cast<char*>(&size), sizeof(size))) {
    if (size < 0 || size > kLargest || !WriteFully(fd, Payload().data(), size)) break;
  }
  close(fd);
}

int ListenOnLoopback() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 8) != 0) {
    return -1;
  }
  return fd;
}

int PortOf(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

class BytesService final : public bench::BytesService::Service {
  grpc::Status Get(grpc::ServerContext*, const bench::BytesRequest* request,
                   bench::BytesResponse* response) override {
    if (request->size() < 0 || request->size() > kLargest) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "size out of range");
    }
    response->set_data(Payload().data(), request->size());
    return grpc::Status::OK;
  }
};

void ServeReference(int report_fd, const sigset_t& signals) {
  Payload();  // faulted in before anything is timed
  const int listener = ListenOnLoopback();
  if (listener < 0) {
    Report(report_fd, absl::StrCat("error cannot listen on 127.0.0.1: ", std::strerror(errno)));
    return;
  }
  std::thread([listener] {
    for (;;) {
      const int fd = accept(listener, nullptr, nullptr);
      if (fd >= 0) std::thread(ServeStream, fd).detach();
    }
  }).detach();

  BytesService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.SetMaxSendMessageSize(INT_MAX);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    Report(report_fd, "error the reference gRPC server cannot listen on 127.0.0.1:0");
    return;
  }
  Report(report_fd, absl::StrCat("ready ", PortOf(listener), " 127.0.0.1:", port));
  int signal = 0;
  sigwait(&signals, &signal);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

struct Peers {
  std::vector<Child> children;  // worker, reference
  std::string worker_address;
  int stream_port = 0;
  std::string bytes_address;
};
Peers* peers = nullptr;

// Starts both children and waits until they serve. Call it while this
// process has a single thread: a fork copies only the calling thread.
void StartPeers(Peers* out) {
  out->children.push_back(Spawn("worker", ServeWorker));
  out->children.push_back(Spawn("reference server", ServeReference));
  const auto deadline = std::chrono::steady_clock::now() + kStartupTimeout;
  for (Child& child : out->children) AwaitReady(child, deadline);
  out->worker_address = out->children[0].address;
  const std::string& reference = out->children[1].address;
  const size_t space = reference.find(' ');
  out->stream_port = std::atoi(reference.substr(0, space).c_str());
  out->bytes_address = reference.substr(space + 1);
}

// ---- the benchmarks -------------------------------------------------------------

// Const (float32, `bytes` of them) -> _Send to kReceiverCpu, on the worker.
GraphDef SendConstGraph(int64_t bytes, const std::string& tensor_name) {
  Tensor value(DT_FLOAT, TensorShape({bytes / static_cast<int64_t>(sizeof(float))}));
  float* p = value.data<float>();
  for (int64_t i = 0; i < value.NumElements(); ++i) p[i] = static_cast<float>(i % 1000);
  GraphDef g;
  NodeDef* c = g.add_node();
  c->set_name("value");
  c->set_op("Const");
  c->set_device(kWorkerCpu);
  SetAttr(c, "dtype", DT_FLOAT);
  SetAttr(c, "value", value);
  NodeDef* send = g.add_node();
  send->set_name("send");
  send->set_op("_Send");
  send->set_device(kWorkerCpu);
  send->add_input("value");
  SetAttr(send, "T", DT_FLOAT);
  SetAttr(send, "tensor_name", tensor_name);
  SetAttr(send, "send_device", kWorkerCpu);
  SetAttr(send, "send_device_incarnation", 1);
  SetAttr(send, "recv_device", kReceiverCpu);
  return g;
}

absl::Status Recv(WorkerInterface& worker, int64_t step_id, const std::string& key,
                  Tensor* tensor) {
  return WaitForCallback([&](StatusCallback done) {  // the RPC's deadline bounds the wait
    worker.RecvTensorAsync(step_id, key, tensor, std::move(done));
  });
}

void SetThroughput(benchmark::State& state, int64_t bytes) {
  state.SetBytesProcessed(state.iterations() * bytes);
}

// `bulk`: whether the receiver uses the worker's bulk port (the default;
// distributed/transport/bulk_server.h) or has the bytes come inside gRPC's answer.
void RecvTensor(benchmark::State& state, bool bulk) {
  const int64_t bytes = state.range(0);
  GrpcRemoteWorker::Options options;
  options.rpc_timeout = absl::Seconds(kCallTimeout.count());
  options.bulk_transfer = bulk;
  static auto* workers = new std::map<bool, std::unique_ptr<GrpcRemoteWorker>>;
  std::unique_ptr<GrpcRemoteWorker>& worker = (*workers)[bulk];
  if (worker == nullptr)
    worker = std::make_unique<GrpcRemoteWorker>(peers->worker_address, options);
  static std::map<int64_t, std::string>* handles = new std::map<int64_t, std::string>;
  static int64_t step_id = 0;
  const std::string tensor_name = absl::StrCat("value_", bytes);
  if (handles->count(bytes) == 0) {
    RegisterGraphArgs request;
    request.graph = SendConstGraph(bytes, tensor_name);
    RegisterGraphResult response;
    CheckOk(worker->RegisterGraph(request, &response), "RegisterGraph");
    (*handles)[bytes] = response.graph_handle;
  }
  const std::string key = CreateRendezvousKey(kWorkerCpu, 1, kReceiverCpu, tensor_name);
  RunGraphArgs run;
  run.graph_handle = (*handles)[bytes];
  RunGraphResult result;
  Tensor tensor;
  bool checked = false;
  for (auto _ : state) {
    run.step_id = ++step_id;
    CheckOk(worker->RunGraph(run, &result), "RunGraph");
    const auto start = std::chrono::steady_clock::now();
    const absl::Status status = Recv(*worker, run.step_id, key, &tensor);
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    CheckOk(status, "RecvTensor");
    if (!checked) {  // the bytes arrived, not just a status
      const int64_t n = tensor.NumElements();
      if (static_cast<int64_t>(tensor.TotalBytes()) != bytes ||
          tensor.data<float>()[n - 1] != static_cast<float>((n - 1) % 1000)) {
        Die("RecvTensor returned the wrong tensor: " + tensor.DebugString());
      }
      checked = true;
    }
    tensor = Tensor();  // its buffer goes back to the cache, as a consumer's would
    CheckOk(worker->CleanupGraph(run.step_id), "CleanupGraph");
  }
  SetThroughput(state, bytes);
}

void BM_RecvTensor(benchmark::State& state) { RecvTensor(state, true); }
void BM_RecvTensorInGrpc(benchmark::State& state) { RecvTensor(state, false); }

void BM_TcpStream(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  static int fd = -1;
  if (fd < 0) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(peers->stream_port);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      Die(absl::StrCat("connect to the TCP stream server: ", std::strerror(errno)));
    }
    const int one = 1;  // small requests go out at once, as gRPC's do
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  std::vector<char> buffer(bytes, 0);  // faulted in before the timing
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    if (!WriteFully(fd, reinterpret_cast<const char*>(&bytes), sizeof(bytes)) ||
        !ReadFully(fd, buffer.data(), buffer.size())) {
      Die(absl::StrCat("TCP stream: ", std::strerror(errno)));
    }
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
  }
  if (buffer.back() != '\x5a') Die("TCP stream: wrong bytes");
  SetThroughput(state, bytes);
}

void BM_GrpcBytesField(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(INT_MAX);
  static auto* stub =
      bench::BytesService::NewStub(
          grpc::CreateCustomChannel(peers->bytes_address, grpc::InsecureChannelCredentials(), args))
          .release();
  bench::BytesRequest request;
  request.set_size(bytes);
  bench::BytesResponse response;
  for (auto _ : state) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kCallTimeout);
    const auto start = std::chrono::steady_clock::now();
    const grpc::Status status = stub->Get(&context, request, &response);
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    if (!status.ok()) Die("BytesService.Get: " + status.error_message());
    if (static_cast<int64_t>(response.data().size()) != bytes) Die("BytesService.Get: wrong size");
  }
  SetThroughput(state, bytes);
}

// Work happens in other processes; each benchmark times its own transfer.
#define TG_TRANSFER_BENCHMARK(fn)     \
  BENCHMARK(fn)                       \
      ->ArgName("bytes")              \
      ->Arg(4 << 10)                  \
      ->Arg(kLargest)                 \
      ->UseManualTime()               \
      ->Unit(benchmark::kMicrosecond) \
      ->Repetitions(9)                \
      ->ReportAggregatesOnly(true)

TG_TRANSFER_BENCHMARK(BM_RecvTensor);
TG_TRANSFER_BENCHMARK(BM_RecvTensorInGrpc);
TG_TRANSFER_BENCHMARK(BM_TcpStream);
TG_TRANSFER_BENCHMARK(BM_GrpcBytesField);

}  // namespace
}  // namespace tensorgrid

int main(int argc, char** argv) {
  using tensorgrid::peers;
  benchmark::Initialize(&argc, argv);  // parses flags only: still one thread
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  tensorgrid::Peers children;
  peers = &children;
  tensorgrid::StartPeers(peers);
  benchmark::RunSpecifiedBenchmarks();
  tensorgrid::StopChildren(children.children);
  return 0;
}
