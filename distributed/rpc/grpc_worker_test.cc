// A real Worker behind GrpcWorkerService on a loopback port, driven through
// GrpcRemoteWorker the way a Master drives the in-process one.
//
//   Master ──► GrpcRemoteWorker ══ gRPC, 127.0.0.1:<free port> ══►
//   GrpcWorkerService ──► Worker
//                                                                   /job:worker/replica:0/task:0
//
// Tensors reach the worker's rendezvous through a registered partition
// `x = _Arg(0) -> _Send(x)`, fed by RunGraph, and come back by RecvTensor.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/rendezvous.h"
#include "core/platform/blocking.h"
#include "core/platform/status.h"
#include "core/runtime/master.h"
#include "core/runtime/worker.h"
#include "distributed/rpc/grpc_remote_worker.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/rpc/grpc_front_door.h"
#include "distributed/rpc/grpc_worker_service.h"
#include "distributed/rpc/tensor_coding.h"
#include "distributed/transport/bulk_client.h"
#include "distributed/transport/bulk_server.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"
#include "proto/worker.grpc.pb.h"

namespace tensorgrid {
namespace {

constexpr char kTask[] = "/job:worker/replica:0/task:0";
constexpr char kCpu[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kPeer[] = "/job:worker/replica:0/task:1/device:CPU:0";
constexpr char kRecvTensorMethod[] = "/tensorgrid.WorkerService/RecvTensor";

// A gRPC server on a free loopback port: a WorkerService over `worker` as
// Server serves it (through a GrpcFrontDoor), or any other `service`.
struct LoopbackServer {
  explicit LoopbackServer(WorkerInterface* worker, BulkServer* bulk = nullptr) {
    GrpcFrontDoor::Options options;
    // Feeds of the large-tensor tests arrive in one RunGraph request.
    options.max_request_bytes = static_cast<int>(kMaxGrpcMessageBytes);
    door = std::make_unique<GrpcFrontDoor>(options);
    worker_service = std::make_unique<GrpcWorkerService>(worker, door.get(), bulk);
    Start([this](grpc::ServerBuilder* builder) { door->RegisterOn(builder); });
  }
  explicit LoopbackServer(grpc::Service* service) {
    Start([service](grpc::ServerBuilder* builder) { builder->RegisterService(service); });
  }
  void Start(const std::function<void(grpc::ServerBuilder*)>& add_services) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    add_services(&builder);
    server = builder.BuildAndStart();
    address = "127.0.0.1:" + std::to_string(port);
  }
  std::unique_ptr<GrpcFrontDoor> door;
  std::unique_ptr<GrpcWorkerService> worker_service;
  std::unique_ptr<grpc::Server> server;  // goes first
  std::string address;
};

// The key under which SendGraph's _Send leaves its input.
std::string SendKey() { return CreateRendezvousKey(kCpu, 1, kPeer, "x"); }

// x = _Arg(0) -> _Send(x) to kPeer, all of type `dtype` on kCpu.
GraphDef SendGraph(DataType dtype) {
  GraphDef g;
  NodeDef* x = g.add_node();
  x->set_name("x");
  x->set_op("_Arg");
  x->set_device(kCpu);
  SetAttr(x, "T", dtype);
  SetAttr(x, "index", 0);
  NodeDef* send = g.add_node();
  send->set_name("send");
  send->set_op("_Send");
  send->set_device(kCpu);
  send->add_input("x");
  SetAttr(send, "T", dtype);
  SetAttr(send, "tensor_name", "x");
  SetAttr(send, "send_device", kCpu);
  SetAttr(send, "send_device_incarnation", 1);
  SetAttr(send, "recv_device", kPeer);
  return g;
}

// Waits for the answer; the RPC's own deadline bounds the wait.
absl::Status RecvTensor(WorkerInterface& worker, int64_t step_id, const std::string& key,
                        Tensor* tensor) {
  return WaitForCallback([&](StatusCallback done) {  // the RPC's deadline bounds the wait
    worker.RecvTensorAsync(step_id, key, tensor, std::move(done));
  });
}

void ExpectSameTensor(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  if (want.dtype() == DT_STRING) {
    for (int64_t i = 0; i < want.NumElements(); ++i) {
      EXPECT_EQ(got.data<std::string>()[i], want.data<std::string>()[i]) << i;
    }
    return;
  }
  ASSERT_EQ(got.TotalBytes(), want.TotalBytes());
  EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), want.TotalBytes()), 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(got.raw_data()) % kTensorAlignment, 0u);
}

class GrpcWorkerTest : public ::testing::Test {
 protected:
  GrpcWorkerTest()
      : worker_(kTask, ConfigProto()),
        bulk_(*BulkServer::Start("127.0.0.1")),
        server_(&worker_, bulk_.get()),
        address_(server_.address),
        remote_(std::make_unique<GrpcRemoteWorker>(address_)) {}
  ~GrpcWorkerTest() override { server_.server->Shutdown(); }

  // x = _Arg(0) -> y = Square(x) -> _Retval(0), all on kCpu.
  static GraphDef SquareGraph() {
    GraphDef g;
    NodeDef* x = g.add_node();
    x->set_name("x");
    x->set_op("_Arg");
    x->set_device(kCpu);
    SetAttr(x, "T", DT_FLOAT);
    SetAttr(x, "index", 0);
    NodeDef* y = g.add_node();
    y->set_name("y");
    y->set_op("Square");
    y->set_device(kCpu);
    y->add_input("x");
    SetAttr(y, "T", DT_FLOAT);
    NodeDef* ret = g.add_node();
    ret->set_name("ret");
    ret->set_op("_Retval");
    ret->set_device(kCpu);
    ret->add_input("y");
    SetAttr(ret, "T", DT_FLOAT);
    SetAttr(ret, "index", 0);
    return g;
  }

  std::string Register(GraphDef graph) {
    RegisterGraphArgs request;
    request.graph = std::move(graph);
    RegisterGraphResult response;
    absl::Status s = remote_->RegisterGraph(request, &response);
    EXPECT_TRUE(s.ok()) << s;
    return response.graph_handle;
  }

  // Runs SendGraph fed with `value` as step `step_id`.
  absl::Status RunSend(const std::string& handle, int64_t step_id, const Tensor& value) {
    RunGraphArgs request;
    request.graph_handle = handle;
    request.step_id = step_id;
    request.feeds = {value};
    RunGraphResult response;
    return remote_->RunGraph(request, &response);
  }

  // `value` sent by the worker's partition and pulled back over RecvTensor.
  // `via`: the receiving end (default remote_).
  absl::StatusOr<Tensor> RoundTrip(const Tensor& value, int64_t step_id,
                                   GrpcRemoteWorker* via = nullptr) {
    const std::string handle = Register(SendGraph(value.dtype()));
    TG_RETURN_IF_ERROR(RunSend(handle, step_id, value));
    Tensor received;
    absl::Status s = RecvTensor(via != nullptr ? *via : *remote_, step_id, SendKey(), &received);
    EXPECT_OK(remote_->CleanupGraph(step_id));
    EXPECT_OK(remote_->DeregisterGraph(handle));
    if (!s.ok()) return s;
    return received;
  }

  // A receiver that learned the bulk port (as a session's start makes it):
  // its RecvTensors go straight there. `step_rpc_timeout`: their deadline.
  std::unique_ptr<GrpcRemoteWorker> DirectReceiver(
      absl::Duration step_rpc_timeout = absl::Hours(1)) {
    GrpcRemoteWorker::Options options;
    options.step_rpc_timeout = step_rpc_timeout;
    auto receiver = std::make_unique<GrpcRemoteWorker>(address_, options);
    GetStatusResult status;
    EXPECT_OK(receiver->GetStatus(&status));
    return receiver;
  }
  // One that keeps to gRPC.
  std::unique_ptr<GrpcRemoteWorker> GrpcReceiver() {
    GrpcRemoteWorker::Options options;
    options.bulk_transfer = false;
    return std::make_unique<GrpcRemoteWorker>(address_, options);
  }

  std::unique_ptr<WorkerService::Stub> RawStub() {
    return WorkerService::NewStub(
        grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }

  Worker worker_;
  std::unique_ptr<BulkServer> bulk_;  // tensors of >= 1 MiB go by ticket
  LoopbackServer server_;
  std::string address_;
  std::unique_ptr<GrpcRemoteWorker> remote_;
};

TEST_F(GrpcWorkerTest, GetStatusListsTheDeviceWithItsIncarnation) {
  GetStatusResult status;
  ASSERT_TRUE(remote_->GetStatus(&status).ok());
  ASSERT_EQ(status.devices.size(), 1u);
  EXPECT_EQ(status.devices[0].name, kCpu);
  EXPECT_EQ(status.devices[0].type, "CPU");
  const Device& local = *worker_.device_mgr().devices()[0];
  EXPECT_EQ(status.devices[0].incarnation, local.incarnation());
  EXPECT_NE(status.devices[0].incarnation, 0u);
}

TEST_F(GrpcWorkerTest, RegisteredGraphRunsWithAFeed) {
  const std::string handle = Register(SquareGraph());
  RunGraphArgs request;
  request.graph_handle = handle;
  request.step_id = 7;
  request.feeds = {Tensor::FromVector<float>({1, -2, 3}, TensorShape({3}))};
  request.collect_step_stats = true;
  RunGraphResult response;
  absl::Status s = remote_->RunGraph(request, &response);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(response.fetches.size(), 1u);
  ExpectTensorEqual<float>(response.fetches[0], {1, 4, 9}, TensorShape({3}));
  EXPECT_GT(response.step_stats.dev_stats_size(), 0);
  EXPECT_TRUE(remote_->CleanupGraph(7).ok());
  EXPECT_TRUE(remote_->DeregisterGraph(handle).ok());
}

TEST_F(GrpcWorkerTest, UnknownHandleIsNotFound) {
  RunGraphArgs request;
  request.graph_handle = "no-such-graph";
  RunGraphResult response;
  absl::Status s = remote_->RunGraph(request, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("no-such-graph"), std::string::npos) << s;
  EXPECT_NE(s.message().find(address_), std::string::npos) << s;

  s = remote_->DeregisterGraph("no-such-graph");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
}

TEST_F(GrpcWorkerTest, GetStatusNamesTheBulkPortAndRunGraphThenGoesThere) {
  const std::string handle = Register(SquareGraph());
  auto run = [&](int64_t step) {
    RunGraphArgs request;
    request.graph_handle = handle;
    request.step_id = step;
    request.feeds = {Tensor::FromVector<float>({2, -3}, TensorShape({2}))};
    request.collect_step_stats = true;
    RunGraphResult response;
    absl::Status s = remote_->RunGraph(request, &response);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return;
    ASSERT_EQ(response.fetches.size(), 1u);
    ExpectTensorEqual<float>(response.fetches[0], {4, 9}, TensorShape({2}));
    EXPECT_GT(response.step_stats.dev_stats_size(), 0);
  };
  run(1);  // the port is not known yet: over gRPC
  EXPECT_EQ(bulk_->calls(), 0);
  GetStatusResult status;
  ASSERT_TRUE(remote_->GetStatus(&status).ok());
  run(2);
  run(3);
  EXPECT_EQ(bulk_->calls(), 2);
  // A worker without bulk transfer keeps to gRPC.
  GrpcRemoteWorker::Options options;
  options.bulk_transfer = false;
  GrpcRemoteWorker in_grpc(address_, options);
  ASSERT_TRUE(in_grpc.GetStatus(&status).ok());
  RunGraphArgs request;
  request.graph_handle = handle;
  request.step_id = 4;
  request.feeds = {Tensor::FromVector<float>({1}, TensorShape({1}))};
  RunGraphResult response;
  EXPECT_TRUE(in_grpc.RunGraph(request, &response).ok());
  EXPECT_EQ(bulk_->calls(), 2);
}

TEST_F(GrpcWorkerTest, RunGraphErrorsOverTheBulkPortMatchGrpcs) {
  GetStatusResult status;
  ASSERT_TRUE(remote_->GetStatus(&status).ok());
  RunGraphArgs request;
  request.graph_handle = "no-such-graph";
  RunGraphResult response;
  absl::Status s = remote_->RunGraph(request, &response);
  EXPECT_EQ(bulk_->calls(), 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("no-such-graph"), std::string::npos) << s;
  EXPECT_NE(s.message().find(address_), std::string::npos) << s;
  // Feeds the graph does not take: the worker's own InvalidArgument.
  request.graph_handle = Register(SquareGraph());
  request.feeds = {Tensor::Scalar<float>(1), Tensor::Scalar<float>(2)};
  s = remote_->RunGraph(request, &response);
  EXPECT_EQ(bulk_->calls(), 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST_F(GrpcWorkerTest, RunGraphFallsBackToGrpcWhenTheBulkPortIsGone) {
  const std::string handle = Register(SquareGraph());
  GetStatusResult status;
  ASSERT_TRUE(remote_->GetStatus(&status).ok());
  bulk_->StopListening();  // as a restarted peer's old port would be
  RunGraphArgs request;
  request.graph_handle = handle;
  request.feeds = {Tensor::FromVector<float>({3}, TensorShape({1}))};
  for (int64_t step : {1, 2}) {  // refused, so over gRPC; then the port is forgotten
    request.step_id = step;
    RunGraphResult response;
    absl::Status s = remote_->RunGraph(request, &response);
    ASSERT_TRUE(s.ok()) << s;
    ExpectTensorEqual<float>(response.fetches[0], {9}, TensorShape({1}));
  }
  EXPECT_EQ(bulk_->calls(), 0);
}

TEST_F(GrpcWorkerTest, PortNeverAskedForIsLearnedInTheBackground) {
  // No GetStatus from us: the first RunGraph goes over gRPC and asks for
  // the port on the side; later ones find it.
  const std::string handle = Register(SquareGraph());
  RunGraphArgs request;
  request.graph_handle = handle;
  request.feeds = {Tensor::FromVector<float>({2}, TensorShape({1}))};
  const absl::Time until = absl::Now() + absl::Seconds(20);
  int64_t step = 0;
  while (bulk_->calls() == 0 && absl::Now() < until) {
    request.step_id = ++step;
    RunGraphResult response;
    ASSERT_OK(remote_->RunGraph(request, &response));
    ExpectTensorEqual<float>(response.fetches[0], {4}, TensorShape({1}));
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_GT(bulk_->calls(), 0);
  EXPECT_GT(step, 1);  // not the first: that one only asked
}

TEST_F(GrpcWorkerTest, RunGraphMeantForAnotherTaskNeverRunsThere) {
  // A task's bulk port that knows whose it is, as Server's do.
  BulkServer::Options options;
  options.task = kTask;
  std::unique_ptr<BulkServer> bulk = *BulkServer::Start("127.0.0.1", options);
  LoopbackServer server(&worker_, bulk.get());
  auto run = [&](const std::string& task) {
    GrpcRemoteWorker::Options remote_options;
    remote_options.task = task;
    GrpcRemoteWorker remote(server.address, remote_options);
    GetStatusResult status;
    EXPECT_OK(remote.GetStatus(&status));
    RegisterGraphArgs graph;
    graph.graph = SquareGraph();
    RegisterGraphResult registered;
    EXPECT_OK(remote.RegisterGraph(graph, &registered));
    RunGraphArgs request;
    request.graph_handle = registered.graph_handle;
    request.step_id = 1;
    request.feeds = {Tensor::FromVector<float>({3}, TensorShape({1}))};
    RunGraphResult response;
    EXPECT_OK(remote.RunGraph(request, &response));
    if (!response.fetches.empty()) {
      ExpectTensorEqual<float>(response.fetches[0], {9}, TensorShape({1}));
    }
  };
  // A client that means another task (whose port this one took): refused
  // unread, so it ran once, over gRPC.
  run("/job:ps/replica:0/task:7");
  EXPECT_EQ(bulk->calls(), 0);
  run(kTask);
  EXPECT_EQ(bulk->calls(), 1);
  server.server->Shutdown();
}

TEST_F(GrpcWorkerTest, RegisterErrorsCrossTheWireUnchanged) {
  GraphDef graph = SquareGraph();
  graph.mutable_node(1)->set_op("NoSuchOp");
  RegisterGraphArgs request;
  request.graph = graph;
  RegisterGraphResult response;
  const absl::Status local = worker_.RegisterGraph(request, &response);
  ASSERT_FALSE(local.ok());
  absl::Status s = remote_->RegisterGraph(request, &response);
  EXPECT_EQ(s.code(), local.code()) << s;
  EXPECT_EQ(s.message(),
            "RegisterGraph on worker " + address_ + ": " + std::string(local.message()));
}

TEST_F(GrpcWorkerTest, GarbageFeedsAreInvalidArgumentAndTheServerKeepsServing) {
  const std::string handle = Register(SquareGraph());
  // RunGraph with one float feed named `feed_name`, whose tensor_content is
  // 3 bytes for a shape of [4] when `malformed`.
  auto run = [&](const std::string& feed_name, bool malformed) {
    RunGraphRequest request;
    request.set_graph_handle(handle);
    NamedTensorProto* feed = request.add_send();
    feed->set_name(feed_name);
    TensorProto* tensor = feed->mutable_tensor();
    tensor->set_dtype(DT_FLOAT);
    tensor->mutable_tensor_shape()->add_dim()->set_size(malformed ? 4 : 1);
    tensor->set_tensor_content(malformed ? std::string(3, '\0') : std::string(4, '\0'));
    RunGraphResponse response;
    grpc::ClientContext context;
    SetDeadline(&context, absl::Seconds(10));
    return RawStub()->RunGraph(&context, request, &response);
  };
  grpc::Status s = run("0", /*malformed=*/true);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("feed 0"), std::string::npos) << s.error_message();

  s = run("3", /*malformed=*/false);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("feed '3'"), std::string::npos) << s.error_message();

  s = run("zero", /*malformed=*/false);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();

  s = run("0", /*malformed=*/false);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(GrpcWorkerTest, RecvTensorRoundTripsEveryKindOfTensor) {
  Tensor strings(DT_STRING, TensorShape({3}));
  strings.data<std::string>()[0] = "";
  strings.data<std::string>()[1] = "two";
  strings.data<std::string>()[2] = std::string(100000, 's');
  std::vector<Tensor> tensors = {
      Tensor::Scalar<float>(-1.5f),
      Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})),
      Tensor::FromVector<int32_t>({-7, 0, 1 << 30}, TensorShape({3})),
      Tensor::FromVector<int64_t>({int64_t{1} << 40}, TensorShape({1, 1})),
      Tensor::FromVector<bool>({true, false, false, true}, TensorShape({4})),
      strings,
      Tensor(DT_FLOAT, TensorShape({0, 3})),
      Tensor(DT_STRING, TensorShape({0})),
  };
  Tensor large(DT_INT32, TensorShape({1 << 18}));  // 1 MiB: the referenced-slice path
  for (int32_t i = 0; i < (1 << 18); ++i) large.data<int32_t>()[i] = i * 7;
  tensors.push_back(large);
  // Over gRPC, and straight from the bulk port (strings as a TensorProto
  // there, the rest as bytes, read in place from 64 KiB on).
  int64_t step = 100;
  for (bool direct : {false, true}) {
    std::unique_ptr<GrpcRemoteWorker> receiver = direct ? DirectReceiver() : GrpcReceiver();
    const int64_t fetched = bulk_->fetches();
    for (const Tensor& t : tensors) {
      absl::StatusOr<Tensor> got = RoundTrip(t, ++step, receiver.get());
      ASSERT_TRUE(got.ok()) << direct << " " << t.DebugString() << ": " << got.status();
      ExpectSameTensor(*got, t);
    }
    EXPECT_EQ(bulk_->fetches() - fetched, direct ? static_cast<int64_t>(tensors.size()) : 0);
  }
}

TEST_F(GrpcWorkerTest, RecvTensorOf64MiBArrivesIntactByTicketDirectlyAndInsideGrpc) {
  Tensor big(DT_FLOAT, TensorShape({16 << 20}));
  float* p = big.data<float>();
  for (int64_t i = 0; i < big.NumElements(); ++i) p[i] = static_cast<float>(i % 100003) * 0.5f;
  // A receiver that does not know the port yet asks over gRPC and gets a
  // ticket, which names the port; its next RecvTensor goes there directly.
  GrpcRemoteWorker fresh(address_);
  for (int64_t step : {1, 2}) {
    absl::StatusOr<Tensor> got = RoundTrip(big, step, &fresh);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSameTensor(*got, big);
    EXPECT_EQ(bulk_->fetches(), step);
  }
  auto in_grpc = GrpcReceiver();
  absl::StatusOr<Tensor> got = RoundTrip(big, 3, in_grpc.get());
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectSameTensor(*got, big);
  EXPECT_EQ(bulk_->fetches(), 2);  // not asked for a ticket
}

TEST_F(GrpcWorkerTest, SmallTensorsNeverGoByTicket) {
  GrpcRemoteWorker fresh(address_);  // does not know the port: over gRPC
  absl::StatusOr<Tensor> got = RoundTrip(Tensor(DT_FLOAT, TensorShape({1000})), 1, &fresh);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(bulk_->fetches(), 0);
}

TEST_F(GrpcWorkerTest, DirectRecvTensorFallsBackToGrpcWhenThePortIsGone) {
  auto receiver = DirectReceiver();
  const Tensor value = Tensor::FromVector<float>({1, 2}, TensorShape({2}));
  absl::StatusOr<Tensor> got = RoundTrip(value, 1, receiver.get());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(bulk_->fetches(), 1);  // straight from the port
  bulk_->Stop();                   // as a restarted peer's old port would be: refused
  for (int64_t step : {2, 3}) {
    got = RoundTrip(value, step, receiver.get());
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectTensorEqual<float>(*got, {1, 2}, TensorShape({2}));
  }
  EXPECT_EQ(bulk_->fetches(), 1);
}

TEST_F(GrpcWorkerTest, DirectRecvTensorOfAKeyNobodySendsIsDeadlineExceededNamingKeyAndStep) {
  auto receiver = DirectReceiver(absl::Seconds(1));
  Tensor received;
  const absl::Status s = RecvTensor(*receiver, 12, "a;0;b;never-sent;0:0", &received);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("'a;0;b;never-sent;0:0' for step 12"), std::string::npos) << s;
}

TEST_F(GrpcWorkerTest, UnreachableBulkPortFallsBackToGrpc) {
  bulk_->StopListening();  // as a firewall between the tasks would
  Tensor big =
      Tensor::FromVector<int32_t>(std::vector<int32_t>(1 << 20, 7), TensorShape({1 << 20}));
  GrpcRemoteWorker fresh(address_);  // learns the port from its first ticket
  for (int64_t step : {1, 2}) {      // the ticket's bytes over gRPC, then no more tickets
    absl::StatusOr<Tensor> got = RoundTrip(big, step, &fresh);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSameTensor(*got, big);
  }
  EXPECT_EQ(bulk_->fetches(), 0);
}

TEST_F(GrpcWorkerTest, RequestForAnUnknownTicketIsNotFound) {
  for (bool with_bulk : {true, false}) {
    LoopbackServer server(&worker_, with_bulk ? bulk_.get() : nullptr);
    auto raw = WorkerService::NewStub(
        grpc::CreateChannel(server.address, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    RecvTensorRequest request;
    request.set_step_id(3);
    request.set_rendezvous_key("k");
    request.set_bulk_ticket(std::string(kBulkTicketBytes, 'z'));
    RecvTensorResponse response;
    const grpc::Status s = raw->RecvTensor(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << with_bulk;
    EXPECT_NE(s.error_message().find("RecvTensor of 'k' for step 3: this task holds no such bulk "
                                     "ticket"),
              std::string::npos)
        << s.error_message();
    server.server->Shutdown();
  }
}

TEST_F(GrpcWorkerTest, RecvTensorOverTheReceiversMessageLimitIsResourceExhausted) {
  // The limit stands in for gRPC's 2 GiB, so that no test allocates that much.
  GrpcRemoteWorker::Options options;
  options.max_message_bytes = 64 << 10;
  options.bulk_transfer = false;  // a ticket's bytes are not a gRPC message
  GrpcRemoteWorker limited(address_, options);
  const std::string handle = Register(SendGraph(DT_FLOAT));
  ASSERT_OK(RunSend(handle, 9, Tensor(DT_FLOAT, TensorShape({1 << 18}))));  // 1 MiB
  Tensor received;
  absl::Status s = RecvTensor(limited, 9, SendKey(), &received);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("RecvTensor of '" + SendKey() + "' on worker " + address_),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("65536"), std::string::npos) << s;
  EXPECT_OK(remote_->CleanupGraph(9));
}

TEST_F(GrpcWorkerTest, FeedsOverTheMessageLimitAreResourceExhaustedBeforeSending) {
  GrpcRemoteWorker::Options options;
  options.max_message_bytes = 64 << 10;
  GrpcRemoteWorker limited(address_, options);
  RunGraphArgs request;
  request.graph_handle = Register(SquareGraph());
  request.feeds = {Tensor(DT_FLOAT, TensorShape({1 << 18}))};  // 1 MiB
  RunGraphResult response;
  absl::Status s = limited.RunGraph(request, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("RunGraph on worker " + address_), std::string::npos) << s;
  EXPECT_NE(s.message().find("over the limit of 65536 bytes"), std::string::npos) << s;
}

TEST_F(GrpcWorkerTest, RecvTensorThatArrivesBeforeTheStepStartsIsAnsweredWhenItSends) {
  const std::string handle = Register(SendGraph(DT_FLOAT));
  Tensor received;
  absl::Notification done;
  absl::Status status;
  remote_->RecvTensorAsync(5, SendKey(), &received, [&](absl::Status s) {
    status = std::move(s);
    done.Notify();
  });
  ASSERT_OK(RunSend(handle, 5, Tensor::FromVector<float>({3, 4}, TensorShape({2}))));
  done.WaitForNotification();  // bounded by the RPC's deadline
  ASSERT_TRUE(status.ok()) << status;
  ExpectTensorEqual<float>(received, {3, 4}, TensorShape({2}));
  EXPECT_OK(remote_->CleanupGraph(5));
}

TEST_F(GrpcWorkerTest, RecvTensorOfAKeyNobodySendsIsDeadlineExceededNamingKeyAndStep) {
  // The server answers just before the client's deadline, so the message is
  // its own (naming the key), not the client's bare "Deadline Exceeded".
  RecvTensorRequest request;
  request.set_step_id(12);
  request.set_rendezvous_key("a;0;b;never-sent;0:0");
  RecvTensorResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, absl::Seconds(1));
  grpc::Status s = RawStub()->RecvTensor(&context, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_NE(s.error_message().find("'a;0;b;never-sent;0:0' for step 12"), std::string::npos)
      << s.error_message();
}

TEST_F(GrpcWorkerTest, RecvTensorOfACleanedUpStepKeepsTheWorkersStatus) {
  // A step cleaned up while a receive waits: the worker's Aborted status
  // crosses the wire with its code (and its mark as an echo of another
  // failure), over gRPC and from the bulk port.
  int64_t step = 3;
  for (bool direct : {false, true}) {
    std::unique_ptr<GrpcRemoteWorker> receiver = direct ? DirectReceiver() : GrpcReceiver();
    Tensor tensor;
    absl::Notification done;
    absl::Status status;
    receiver->RecvTensorAsync(++step, "a;0;b;t;0:0", &tensor, [&](absl::Status s) {
      status = std::move(s);
      done.Notify();
    });
    // Clean up until the request has reached the worker's rendezvous.
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    do {
      ASSERT_OK(worker_.CleanupGraph(step));
    } while (!done.WaitForNotificationWithTimeout(absl::Milliseconds(100)) &&
             absl::Now() < give_up);
    ASSERT_TRUE(done.HasBeenNotified());
    EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
    EXPECT_NE(status.message().find("RecvTensor of 'a;0;b;t;0:0' on worker " + address_),
              std::string::npos)
        << status;
    EXPECT_TRUE(IsDerivedError(status)) << direct << ": " << status;
  }
}

TEST_F(GrpcWorkerTest, GarbageRecvTensorRequestIsInvalidArgument) {
  grpc::GenericStub stub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  grpc::Slice garbage(std::string("\x12\x7f not a request"));
  grpc::ByteBuffer request(&garbage, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  SetDeadline(&context, absl::Seconds(10));
  absl::Notification done;
  grpc::Status status;
  stub.UnaryCall(&context, kRecvTensorMethod, grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();  // bounded by the deadline
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("RecvTensor is not a valid message"), std::string::npos)
      << status.error_message();
}

TEST_F(GrpcWorkerTest, MasterRunsAStepThroughTheRemoteWorker) {
  GraphDef graph;
  NodeDef* x = graph.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  SetAttr(x, "dtype", DT_FLOAT);
  NodeDef* y = graph.add_node();
  y->set_name("y");
  y->set_op("Square");
  y->add_input("x");
  SetAttr(y, "T", DT_FLOAT);

  Master master(ConfigProto(), remote_.get(), kTask);
  ASSERT_TRUE(master.Create(graph).ok());
  for (float v : {2.f, 5.f}) {  // the second step reuses the registered partition
    std::vector<Tensor> outputs;
    absl::Status s =
        master.Run(RunOptions(), {{"x:0", Tensor::FromVector<float>({v}, TensorShape({1}))}},
                   {"y:0"}, {}, &outputs, nullptr);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(outputs.size(), 1u);
    ExpectTensorEqual<float>(outputs[0], {v * v}, TensorShape({1}));
  }
  EXPECT_TRUE(master.Close().ok());
}

// Forwards to a Worker and says when a RecvTensor has reached it; after
// HoldStatus, a GetStatus is kept unanswered until AnswerHeld.
class RecvWatchingWorker final : public WorkerInterface {
 public:
  explicit RecvWatchingWorker(Worker* worker) : worker_(worker) {}
  void GetStatusAsync(absl::Time deadline, GetStatusResult* r, StatusCallback done) override {
    {
      absl::MutexLock lock(&mu);
      if (hold_status) {
        held.push_back(std::move(done));
        return;
      }
    }
    worker_->GetStatusAsync(deadline, r, std::move(done));
  }
  void RegisterGraphAsync(const RegisterGraphArgs& a, RegisterGraphResult* r,
                          StatusCallback done) override {
    worker_->RegisterGraphAsync(a, r, std::move(done));
  }
  void DeregisterGraphAsync(const std::string& handle, absl::Time deadline,
                            StatusCallback done) override {
    worker_->DeregisterGraphAsync(handle, deadline, std::move(done));
  }
  void RunGraphAsync(const RunGraphArgs& a, RunGraphResult* r, StatusCallback done) override {
    worker_->RunGraphAsync(a, r, std::move(done));
  }
  void CleanupGraphAsync(int64_t step_id, StatusCallback done) override {
    worker_->CleanupGraphAsync(step_id, std::move(done));
  }
  void RecvTensorAsync(int64_t step_id, const std::string& key, Tensor* tensor,
                       StatusCallback done, CancellationManager* cancellation) override {
    worker_->RecvTensorAsync(step_id, key, tensor, std::move(done), cancellation);
    if (!recv_started.HasBeenNotified()) recv_started.Notify();
  }
  // GetStatus calls from now on are held unanswered (a frozen task).
  void HoldStatus() {
    absl::MutexLock lock(&mu);
    hold_status = true;
  }
  size_t held_calls() {
    absl::MutexLock lock(&mu);
    return held.size();
  }
  // Answers the held calls (so that the server can stop), and holds no more.
  void AnswerHeld() {
    std::vector<StatusCallback> answer;
    {
      absl::MutexLock lock(&mu);
      hold_status = false;
      answer.swap(held);
    }
    for (StatusCallback& done : answer) done(errors::Cancelled("test over"));
  }

  absl::Notification recv_started;

 private:
  Worker* const worker_;
  absl::Mutex mu;
  bool hold_status ABSL_GUARDED_BY(mu) = false;
  std::vector<StatusCallback> held ABSL_GUARDED_BY(mu);
};

TEST(GrpcRemoteWorkerTest, GetStatusEndsAtItsDeadline) {
  Worker worker(kTask, ConfigProto());
  RecvWatchingWorker silent(&worker);
  silent.HoldStatus();
  LoopbackServer server(&silent);
  GrpcRemoteWorker remote(server.address);  // an RPC timeout of 60 s
  GetStatusResult status;
  absl::Notification answered;
  absl::Status s;
  remote.GetStatusAsync(absl::Now() + absl::Milliseconds(200), &status, [&](absl::Status got) {
    s = got;
    answered.Notify();
  });
  ASSERT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30)))
      << "GetStatus waited past its deadline";
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  silent.AnswerHeld();
}

// A call nobody waits for (the master's CleanupGraph after a failed step)
// may be in flight to a frozen task when its worker goes (its Server
// stops): the destructor cancels it and waits, so that its callback never
// runs on a worker that is gone.
TEST(GrpcRemoteWorkerTest, DestroyingTheWorkerEndsItsCallsInFlightFirst) {
  Worker worker(kTask, ConfigProto());
  RecvWatchingWorker silent(&worker);
  silent.HoldStatus();
  LoopbackServer server(&silent);
  auto remote = std::make_unique<GrpcRemoteWorker>(server.address);  // an RPC timeout of 60 s
  GetStatusResult status;
  absl::Notification answered;
  absl::Status s;
  remote->GetStatusAsync(absl::InfiniteFuture(), &status, [&](absl::Status got) {
    s = got;
    answered.Notify();
  });
  for (int i = 0; i < 3000 && silent.held_calls() == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(silent.held_calls(), 1u);  // the call is at the frozen peer
  remote.reset();         // returns once no callback uses the worker; `done` may run just after
  ASSERT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30)))
      << "a call outlived its worker";
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
  silent.AnswerHeld();
}

TEST(GrpcWorkerServiceTest, RecvTensorCancelledByTheClientEndsTheCallOnTheServer) {
  Worker worker(kTask, ConfigProto());
  RecvWatchingWorker watching(&worker);
  LoopbackServer server(&watching);

  // A receive for a key nobody sends, with a deadline far beyond the test.
  auto stub = WorkerService::NewStub(
      grpc::CreateChannel(server.address, grpc::InsecureChannelCredentials()));
  RecvTensorRequest request;
  request.set_step_id(4);
  request.set_rendezvous_key("a;0;b;never-sent;0:0");
  RecvTensorResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, absl::Hours(1));
  absl::Notification answered;
  grpc::Status status;
  stub->async()->RecvTensor(&context, &request, &response, [&](grpc::Status s) {
    status = std::move(s);
    answered.Notify();
  });
  ASSERT_TRUE(watching.recv_started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  context.TryCancel();
  answered.WaitForNotification();  // a cancelled call completes at once
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << status.error_message();

  // Shutdown waits for calls in progress: it returns only if the server
  // ended the cancelled call rather than waiting for its deadline.
  absl::Notification shut_down;
  std::thread shutdown([&] {
    server.server->Shutdown();
    shut_down.Notify();
  });
  const bool ended = shut_down.WaitForNotificationWithTimeout(absl::Seconds(60));
  EXPECT_TRUE(ended) << "the server still holds the cancelled RecvTensor";
  if (!ended) EXPECT_OK(worker.CleanupGraph(4));  // answers it, so that Shutdown returns
  shutdown.join();
}

// A WorkerService whose RecvTensor answers `bytes`, whatever was asked.
class CannedRecvTensorService final
    : public WorkerService::WithRawCallbackMethod_RecvTensor<WorkerService::Service> {
 public:
  explicit CannedRecvTensorService(std::string bytes) : bytes_(std::move(bytes)) {}
  grpc::ServerUnaryReactor* RecvTensor(grpc::CallbackServerContext* context,
                                       const grpc::ByteBuffer*,
                                       grpc::ByteBuffer* response) override {
    grpc::Slice slice(bytes_);
    *response = grpc::ByteBuffer(&slice, 1);
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

 private:
  const std::string bytes_;
};

absl::Status RecvFromCannedService(const std::string& bytes) {
  CannedRecvTensorService service(bytes);
  LoopbackServer server(&service);
  GrpcRemoteWorker remote(server.address);
  Tensor tensor;
  absl::Status s = RecvTensor(remote, 1, "a;0;b;canned;0:0", &tensor);
  EXPECT_NE(s.message().find("RecvTensor of 'a;0;b;canned;0:0' on worker " + server.address),
            std::string::npos)
      << s;
  server.server->Shutdown();
  return s;
}

TEST(GrpcRemoteWorkerTest, UnparseableRecvTensorResponseIsDataLossNamingTheKey) {
  absl::Status s = RecvFromCannedService("\x0a\xff\xff\xff\x0f truncated");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
}

TEST(GrpcRemoteWorkerTest, RecvTensorResponseWithContentOfTheWrongSizeIsInvalidArgument) {
  RecvTensorResponse response;
  response.mutable_tensor()->set_dtype(DT_FLOAT);
  response.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(4);
  response.mutable_tensor()->set_tensor_content(std::string(15, '\0'));
  absl::Status s = RecvFromCannedService(response.SerializeAsString());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("15 bytes of tensor_content"), std::string::npos) << s;
}

// A WorkerService whose GetStatus answers only when the caller cancels it.
class SilentGetStatusService final : public WorkerService::CallbackService {
 public:
  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext*, const GetStatusRequest*,
                                      GetStatusResponse*) override {
    class Reactor final : public grpc::ServerUnaryReactor {
     public:
      explicit Reactor(absl::Notification* cancelled) : cancelled_(cancelled) {}
      void OnCancel() override {
        cancelled_->Notify();
        Finish(grpc::Status::CANCELLED);
      }
      void OnDone() override { delete this; }

     private:
      absl::Notification* const cancelled_;
    };
    asked.Notify();
    return new Reactor(&cancelled);
  }

  absl::Notification asked;
  absl::Notification cancelled;
};

// The first RecvTensor asks the peer's GetStatus for its bulk port in the
// background; the worker's destructor cancels that question rather than
// leaving it to end on gRPC's thread after the channel is gone.
TEST(GrpcRemoteWorkerTest, DestroyingTheWorkerCancelsTheBulkPortsDiscovery) {
  SilentGetStatusService service;
  LoopbackServer server(&service);
  {
    GrpcRemoteWorker remote(server.address);
    Tensor tensor;
    // This service has no RecvTensor: Unimplemented, after asking for the port.
    EXPECT_EQ(RecvTensor(remote, 1, "a;0;b;t;0:0", &tensor).code(),
              absl::StatusCode::kUnimplemented);
    ASSERT_TRUE(service.asked.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_FALSE(service.cancelled.HasBeenNotified());
  }
  EXPECT_TRUE(service.cancelled.WaitForNotificationWithTimeout(absl::Seconds(30)))
      << "the GetStatus of a destroyed worker is still waiting for its answer";
  server.server->Shutdown();
}

// A TCP port that is bound (so nobody else takes it) but not listening.
class DeadPort {
 public:
  DeadPort() : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
  }
  ~DeadPort() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

TEST(GrpcRemoteWorkerTest, UnreachablePeerIsUnavailableNamingTheAddress) {
  DeadPort dead;
  const std::string address = "127.0.0.1:" + std::to_string(dead.port());
  GrpcRemoteWorker::Options options;
  options.rpc_timeout = absl::Seconds(2);
  GrpcRemoteWorker remote(address, options);

  GetStatusResult status;
  absl::Status s = remote.GetStatus(&status);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find(address), std::string::npos) << s;

  Tensor tensor;
  s = RecvTensor(remote, 1, "a;0;b;t;0:0", &tensor);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find(address), std::string::npos) << s;
}

}  // namespace
}  // namespace tensorgrid
