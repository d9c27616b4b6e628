// A client session over gRPC: NewSession("grpc://127.0.0.1:PORT") talks to a
// GrpcMasterService whose Masters drive one in-process Worker.
//
//   GrpcSession ══ MasterService on 127.0.0.1:<port> ══► GrpcMasterService
//                                                          └─► Master ──► Worker
//
//   x (float [2], fed) ──► y = Square(x) ──► z = Square(y)  (z added by Extend)
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/synchronization/notification.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/rendezvous.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/free_port.h"
#include "core/public/session.h"
#include "core/runtime/master.h"
#include "core/runtime/worker.h"
#include "distributed/rpc/grpc_front_door.h"
#include "distributed/rpc/grpc_master_service.h"
#include "distributed/rpc/grpc_remote_worker.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/transport/bulk_client.h"
#include "distributed/transport/bulk_server.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"
#include "proto/master.grpc.pb.h"

namespace tensorgrid {
namespace {

constexpr char kTask[] = "/job:localhost/replica:0/task:0";

NodeDef MakeNode(const std::string& name, const std::string& op, std::vector<std::string> inputs) {
  NodeDef n;
  n.set_name(name);
  n.set_op(op);
  for (auto& i : inputs) n.add_input(i);
  return n;
}

NodeDef Square(const std::string& name, const std::string& input) {
  NodeDef n = MakeNode(name, "Square", {input});
  SetAttr(&n, "T", DT_FLOAT);
  return n;
}

// x (float placeholder [2]) -> y = Square(x)
GraphDef SquareGraph() {
  GraphDef g;
  NodeDef x = MakeNode("x", "Placeholder", {});
  SetAttr(&x, "dtype", DT_FLOAT);
  SetAttr(&x, "shape", PartialTensorShape({2}));
  *g.add_node() = x;
  *g.add_node() = Square("y", "x");
  return g;
}

// A session, made through `stub`, whose graph is one _Recv ("never") of a
// tensor nobody sends: its steps block until cancelled.
void CreateNeverSession(MasterService::Stub& stub, CreateSessionResponse* created) {
  NodeDef recv = MakeNode("never", "_Recv", {});
  SetAttr(&recv, "tensor_type", DT_FLOAT);
  SetAttr(&recv, "tensor_name", "never_sent");
  const std::string cpu = std::string(kTask) + "/device:CPU:0";
  SetAttr(&recv, "send_device", cpu);
  SetAttr(&recv, "send_device_incarnation", int64_t{1});
  SetAttr(&recv, "recv_device", cpu);
  CreateSessionRequest create;
  *create.mutable_graph_def()->add_node() = recv;
  grpc::ClientContext context;
  SetDeadline(&context, absl::Seconds(10));
  ASSERT_TRUE(stub.CreateSession(&context, create, created).ok());
}

// A callable of that session fetching "never".
void MakeNeverCallable(MasterService::Stub& stub, const std::string& session,
                       MakeCallableResponse* made) {
  MakeCallableRequest make;
  make.set_session_handle(session);
  make.mutable_options()->add_fetch("never");
  grpc::ClientContext context;
  SetDeadline(&context, absl::Seconds(10));
  ASSERT_TRUE(stub.MakeCallable(&context, make, made).ok());
}

// A GrpcMasterService on a free loopback port over one Worker; with the
// parameter true, it serves steps on a bulk port too, as tg_server does, so
// every test runs both ways.
class GrpcSessionTest : public ::testing::TestWithParam<bool> {
 protected:
  GrpcSessionTest()
      : worker_(kTask, ConfigProto()),
        door_(GrpcFrontDoor::Options()),
        service_(
            [this](const ConfigProto& config) {
              return std::make_unique<Master>(config, &worker_, kTask);
            },
            &door_) {
    if (GetParam()) {
      absl::StatusOr<std::unique_ptr<BulkServer>> bulk = BulkServer::Start("127.0.0.1");
      EXPECT_TRUE(bulk.ok()) << bulk.status();
      if (bulk.ok()) {
        bulk_ = *std::move(bulk);
        service_.ServeStepsOn(bulk_.get());
      }
    }
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    door_.RegisterOn(&builder);
    server_ = builder.BuildAndStart();
    address_ = "127.0.0.1:" + std::to_string(port);
  }
  ~GrpcSessionTest() override {
    server_->Shutdown();
    if (bulk_ != nullptr) bulk_->Stop();  // before the service goes
  }

  // Steps the bulk port served (0 without one).
  int64_t BulkCalls() const { return bulk_ != nullptr ? bulk_->calls() : 0; }

  std::unique_ptr<Session> Connect() {
    SessionOptions options;
    options.target = "grpc://" + address_;
    auto session = NewSession(options);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? *std::move(session) : nullptr;
  }

  std::unique_ptr<MasterService::Stub> RawStub() {
    return MasterService::NewStub(
        grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }

  Worker worker_;
  GrpcFrontDoor door_;
  GrpcMasterService service_;
  std::unique_ptr<BulkServer> bulk_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

INSTANTIATE_TEST_SUITE_P(OverGrpcAndBulk, GrpcSessionTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Bulk" : "Grpc";
                         });

TEST_P(GrpcSessionTest, CreateRunExtendAndRunMetadata) {
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SquareGraph()));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x", Tensor::FromVector<float>({2, 3}, {2})}}, {"y"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {4, 9}, TensorShape({2}));

  GraphDef more;
  *more.add_node() = Square("z", "y");
  ASSERT_OK(session->Extend(more));
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  ASSERT_OK(session->Run(options, {{"x:0", Tensor::FromVector<float>({2, 3}, {2})}}, {"z", "y:0"},
                         {}, &out, &metadata));
  ExpectTensorEqual<float>(out[0], {16, 81}, TensorShape({2}));
  ExpectTensorEqual<float>(out[1], {4, 9}, TensorShape({2}));
  EXPECT_GE(metadata.partition_graphs_size(), 1);
  EXPECT_STATUS(session->Create(SquareGraph()), kAlreadyExists, "use Extend");
  EXPECT_OK(session->Close());
}

TEST_P(GrpcSessionTest, Callable) {
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SquareGraph()));
  CallableOptions options;
  options.add_feed("x");
  options.add_fetch("y");
  absl::StatusOr<Session::CallableHandle> handle = session->MakeCallable(options);
  ASSERT_OK(handle.status());
  std::vector<Tensor> out;
  for (float v : {1.0f, 5.0f}) {
    ASSERT_OK(
        session->RunCallable(*handle, {Tensor::FromVector<float>({v, -v}, {2})}, &out, nullptr));
    ExpectTensorEqual<float>(out[0], {v * v, v * v}, TensorShape({2}));
  }
  ASSERT_OK(session->ReleaseCallable(*handle));
  EXPECT_STATUS(
      session->RunCallable(*handle, {Tensor::FromVector<float>({1, 2}, {2})}, &out, nullptr),
      kInvalidArgument, "no callable with handle");
  // With a bulk port, all three steps went there (the failed one too: a
  // failure there is final, never sent again over gRPC).
  EXPECT_EQ(BulkCalls(), GetParam() ? 3 : 0);
}

// Feeds and fetches of several MiB (copied on the service's own pool rather
// than on gRPC's callback threads) arrive whole, by RunStep and by callable.
TEST_P(GrpcSessionTest, LargeFeedsAndFetches) {
  GraphDef g;
  NodeDef x = MakeNode("x", "Placeholder", {});
  SetAttr(&x, "dtype", DT_FLOAT);
  SetAttr(&x, "shape", PartialTensorShape({-1}));
  *g.add_node() = x;
  *g.add_node() = Square("y", "x");
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(g));
  const int64_t n = 3 << 20 >> 2;  // 3 MiB of floats
  Tensor big(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) big.data<float>()[i] = static_cast<float>(i % 1000);
  auto check = [&](const Tensor& y) {
    ASSERT_EQ(y.NumElements(), n);
    for (int64_t i = 0; i < n; i += 4099) {
      ASSERT_EQ(y.data<float>()[i], static_cast<float>((i % 1000) * (i % 1000))) << i;
    }
    ASSERT_EQ(y.data<float>()[n - 1], static_cast<float>(((n - 1) % 1000) * ((n - 1) % 1000)));
  };
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x", big}}, {"y"}, {}, &out));
  check(out[0]);
  CallableOptions options;
  options.add_feed("x");
  options.add_fetch("y");
  absl::StatusOr<Session::CallableHandle> handle = session->MakeCallable(options);
  ASSERT_OK(handle.status());
  ASSERT_OK(session->RunCallable(*handle, {big}, &out, nullptr));
  check(out[0]);
  EXPECT_EQ(BulkCalls(), GetParam() ? 2 : 0);  // both steps where they were meant to go
}

TEST_P(GrpcSessionTest, WrongFeedShapeNamesThePlaceholder) {
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SquareGraph()));
  std::vector<Tensor> out;
  EXPECT_STATUS(session->Run({{"x", Tensor::FromVector<float>({1, 2, 3}, {3})}}, {"y"}, {}, &out),
                kInvalidArgument, "'x'");
}

TEST_P(GrpcSessionTest, UninitializedVariableIsFailedPreconditionNamingIt) {
  GraphDef g;
  NodeDef w = MakeNode("w", "VariableV2", {});
  SetAttr(&w, "dtype", DT_FLOAT);
  SetAttr(&w, "shape", PartialTensorShape({2}));
  *g.add_node() = w;
  NodeDef read = MakeNode("read", "Identity", {"w"});
  SetAttr(&read, "T", DT_FLOAT);
  *g.add_node() = read;
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(g));
  std::vector<Tensor> out;
  absl::Status s = session->Run({}, {"read"}, {}, &out);
  EXPECT_STATUS(s, kFailedPrecondition, "uninitialized variable 'w'");
  EXPECT_FALSE(IsDerivedError(s)) << s;
}

TEST_P(GrpcSessionTest, ListDevicesBeforeAndAfterCreate) {
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  for (int created = 0; created < 2; ++created) {
    absl::StatusOr<std::vector<DeviceInfo>> devices = session->ListDevices();
    ASSERT_OK(devices.status());
    ASSERT_EQ(devices->size(), 1u);
    EXPECT_EQ((*devices)[0].name, "/job:localhost/replica:0/task:0/device:CPU:0");
    EXPECT_EQ((*devices)[0].type, "CPU");
    EXPECT_NE((*devices)[0].incarnation, 0u);
    if (!created) ASSERT_OK(session->Create(SquareGraph()));
  }
}

// w = 2 (assigned), read = Identity(w); Reset drops w and closes the session.
TEST_P(GrpcSessionTest, ResetClearsVariablesAndClosesSessions) {
  GraphDef g;
  NodeDef w = MakeNode("w", "VariableV2", {});
  SetAttr(&w, "dtype", DT_FLOAT);
  SetAttr(&w, "shape", PartialTensorShape({}));
  *g.add_node() = w;
  NodeDef two = MakeNode("two", "Const", {});
  SetAttr(&two, "dtype", DT_FLOAT);
  SetAttr(&two, "value", Tensor::Scalar<float>(2));
  *g.add_node() = two;
  NodeDef assign = MakeNode("assign", "Assign", {"w", "two"});
  SetAttr(&assign, "T", DT_FLOAT);
  *g.add_node() = assign;
  NodeDef read = MakeNode("read", "Identity", {"w"});
  SetAttr(&read, "T", DT_FLOAT);
  *g.add_node() = read;

  auto first = Connect();
  ASSERT_NE(first, nullptr);
  ASSERT_OK(first->Create(g));
  ASSERT_OK(first->Run({}, {}, {"assign"}, nullptr));
  auto second = Connect();  // another client sees w
  ASSERT_NE(second, nullptr);
  ASSERT_OK(second->Create(g));
  std::vector<Tensor> out;
  ASSERT_OK(second->Run({}, {"read"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {2}, TensorShape({}));

  SessionOptions options;
  options.target = "grpc://" + address_;
  ASSERT_OK(Reset(options, {}));
  EXPECT_STATUS(first->Run({}, {"read"}, {}, &out), kNotFound, "no session with handle");
  auto third = Connect();
  ASSERT_NE(third, nullptr);
  ASSERT_OK(third->Create(g));
  EXPECT_STATUS(third->Run({}, {"read"}, {}, &out), kFailedPrecondition,
                "uninitialized variable 'w'");
}

TEST_P(GrpcSessionTest, NullOutputsAreFineWithoutFetchesOnly) {
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SquareGraph()));
  // Targets only: no outputs vector needed (ClientSession passes none).
  ASSERT_OK(session->Run(RunOptions(), {{"x", Tensor::FromVector<float>({2, 3}, {2})}}, {}, {"y"},
                         nullptr, nullptr));
  EXPECT_STATUS(session->Run(RunOptions(), {{"x", Tensor::FromVector<float>({2, 3}, {2})}}, {"y"},
                             {}, nullptr, nullptr),
                kInvalidArgument, "no outputs vector");
}

TEST_P(GrpcSessionTest, RunAfterCloseFails) {
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SquareGraph()));
  ASSERT_OK(session->Close());
  std::vector<Tensor> out;
  EXPECT_STATUS(session->Run({{"x", Tensor::FromVector<float>({1, 2}, {2})}}, {"y"}, {}, &out),
                kFailedPrecondition, "session is closed");
  EXPECT_STATUS(session->Extend(GraphDef()), kFailedPrecondition, "session is closed");
}

TEST_P(GrpcSessionTest, RunBeforeCreateFails) {
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> out;
  EXPECT_STATUS(session->Run({}, {"y"}, {}, &out), kFailedPrecondition, "call Create first");
}

// A gRPC master service on loopback whose cluster has this process's task
// and a ps that never comes up (nothing listens at its address).
class MasterWithoutItsPs {
 public:
  static constexpr char kPs[] = "/job:ps/replica:0/task:0";

  explicit MasterWithoutItsPs(GrpcFrontDoor::Options options = GrpcFrontDoor::Options())
      : missing_("127.0.0.1:" + std::to_string(FreePort())),
        door_(options),
        service_(
            [this](const ConfigProto& config) {
              auto master = std::make_unique<Master>(
                  config, Master::WorkerMap{{kTask, &worker_}, {kPs, &missing_}}, kTask);
              master->SetWaitReport(absl::Hours(1), [](const std::string&) {});
              return master;
            },
            &door_) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    door_.RegisterOn(&builder);
    server_ = builder.BuildAndStart();
    stub_ = MasterService::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                       grpc::InsecureChannelCredentials()));
  }
  ~MasterWithoutItsPs() { server_->Shutdown(); }

  MasterService::Stub& stub() { return *stub_; }

 private:
  Worker worker_{kTask, ConfigProto()};
  GrpcRemoteWorker missing_;
  GrpcFrontDoor door_;
  GrpcMasterService service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<MasterService::Stub> stub_;
};

// A CreateSession that makes the master wait for its tasks for 60 s.
CreateSessionRequest WaitingForAMinute() {
  CreateSessionRequest request;
  request.mutable_config()->set_operation_timeout_in_ms(60000);
  return request;
}

// The master waits for a task that never comes for its startup timeout
// (60 s here), but its answer naming the task reaches a client whose own
// deadline is shorter before that deadline: not DEADLINE_EXCEEDED naming
// nobody.
TEST(GrpcMasterStartupTest, MissingTaskIsNamedBeforeTheClientsDeadline) {
  MasterWithoutItsPs master;
  CreateSessionResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, absl::Seconds(3));
  const grpc::Status status = master.stub().CreateSession(&context, WaitingForAMinute(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_NE(
      status.error_message().find(absl::StrCat(
          "(the caller's deadline; the startup timeout is 60000 ms): ", MasterWithoutItsPs::kPs)),
      std::string::npos)
      << status.error_message();
}

// A client that goes away while the master waits for a missing task ends
// that wait: the master's thread for it is free again at once (here the
// only one the door allows), not after the startup timeout (60 s).
TEST(GrpcMasterStartupTest, AClientGoingAwayEndsTheMastersWaitForTasks) {
  GrpcFrontDoor::Options one_thread;
  one_thread.max_own_threads = 1;
  MasterWithoutItsPs master(one_thread);
  CreateSessionResponse response;
  grpc::ClientContext leaving;
  grpc::Status left;
  std::thread client(
      [&] { left = master.stub().CreateSession(&leaving, WaitingForAMinute(), &response); });
  absl::SleepFor(absl::Milliseconds(500));  // the master waits for the ps
  leaving.TryCancel();
  client.join();
  EXPECT_EQ(left.error_code(), grpc::StatusCode::CANCELLED) << left.error_message();
  // This task's devices alone need no ps, only the door's one thread.
  ListDevicesRequest list;
  list.mutable_config()->add_device_filters("/job:localhost");
  grpc::Status listed;
  for (const absl::Time give_up = absl::Now() + absl::Seconds(10); absl::Now() < give_up;) {
    ListDevicesResponse devices;
    grpc::ClientContext context;
    SetDeadline(&context, absl::Seconds(5));
    listed = master.stub().ListDevices(&context, list, &devices);
    if (listed.ok()) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(listed.ok()) << listed.error_message();
}

TEST(GrpcSessionTargetTest, UnreachableTargetIsUnavailableNamingTheAddress) {
  SessionOptions options;
  options.target = "grpc://127.0.0.1:1";  // nothing listens on port 1
  options.config.set_operation_timeout_in_ms(10000);
  auto session = NewSession(options);
  ASSERT_OK(session.status());
  EXPECT_STATUS((*session)->Create(SquareGraph()), kUnavailable, "127.0.0.1:1");
}

// An address that takes the connection but speaks no gRPC (a socket that
// listens and never reads) is named once the startup timeout has passed,
// saying so, rather than as a bare deadline after the call's grace.
TEST(GrpcSessionTargetTest, TargetThatSpeaksNoGrpcIsDeadlineExceededSayingSo) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 8), 0);  // the kernel completes connections; nobody reads them
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string address = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));
  SessionOptions options;
  options.target = "grpc://" + address;
  options.config.set_operation_timeout_in_ms(1000);
  auto session = NewSession(options);
  ASSERT_OK(session.status());
  EXPECT_STATUS((*session)->Create(SquareGraph()), kDeadlineExceeded,
                absl::StrCat("CreateSession on master ", address,
                             ": no gRPC connection within 1s (the address took the connection "
                             "but never completed gRPC's handshake"));
  close(fd);
}

TEST(GrpcSessionTargetTest, TargetWithoutAddressIsInvalidArgument) {
  SessionOptions options;
  options.target = "grpc://";
  EXPECT_STATUS(NewSession(options).status(), kInvalidArgument, "grpc://host:port");
}

TEST_P(GrpcSessionTest, ConcurrentRunsOnOneSession) {
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SquareGraph()));
  std::vector<absl::Status> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const float v = static_cast<float>(t * 100 + i);
        std::vector<Tensor> out;
        absl::Status s =
            session->Run({{"x", Tensor::FromVector<float>({v, 1}, {2})}}, {"y"}, {}, &out);
        if (s.ok() && out[0].data<float>()[0] != v * v) {
          s = absl::InternalError("thread " + std::to_string(t) + " got a wrong value");
        }
        if (!s.ok()) {
          failures[t] = s;
          return;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (const absl::Status& s : failures) EXPECT_OK(s);
  EXPECT_EQ(BulkCalls(), GetParam() ? 200 : 0);
}

// The service itself, through the generated stub.
// A client that cancels its RunStep or RunCallable cancels the step itself:
// the call ends Cancelled at once, and the step blocked in a _Recv that
// never comes (no timeout) is gone from the worker, so the server shuts down
// without waiting for it. The first RunStep of a signature also builds it.
TEST_P(GrpcSessionTest, ClientCancellingAStepCancelsItOnTheWorker) {
  auto stub = RawStub();
  CreateSessionResponse created;
  ASSERT_NO_FATAL_FAILURE(CreateNeverSession(*stub, &created));

  // Starts the call, lets the step block, cancels it; the status it ended with.
  auto cancelled = [&](auto start) {
    grpc::ClientContext context;
    SetDeadline(&context, absl::Seconds(60));
    absl::Notification answered;
    grpc::Status status;
    start(&context, [&](grpc::Status s) {
      status = std::move(s);
      answered.Notify();
    });
    EXPECT_FALSE(answered.WaitForNotificationWithTimeout(absl::Milliseconds(300)))
        << status.error_message();
    context.TryCancel();
    EXPECT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30)));
    return status;
  };
  RunStepRequest run;
  run.set_session_handle(created.session_handle());
  run.add_fetch("never");
  RunStepResponse ran;
  EXPECT_EQ(cancelled([&](grpc::ClientContext* c, std::function<void(grpc::Status)> done) {
              stub->async()->RunStep(c, &run, &ran, std::move(done));
            }).error_code(),
            grpc::StatusCode::CANCELLED);

  MakeCallableResponse made;
  ASSERT_NO_FATAL_FAILURE(MakeNeverCallable(*stub, created.session_handle(), &made));
  RunCallableRequest call;
  call.set_session_handle(created.session_handle());
  call.set_handle(made.handle());
  RunCallableResponse called;
  EXPECT_EQ(cancelled([&](grpc::ClientContext* c, std::function<void(grpc::Status)> done) {
              stub->async()->RunCallable(c, &call, &called, std::move(done));
            }).error_code(),
            grpc::StatusCode::CANCELLED);

  // Shutdown waits for calls in progress: it returns only if both steps ended.
  absl::Notification shut_down;
  std::thread shutdown([&] {
    server_->Shutdown();
    shut_down.Notify();
  });
  const bool ended = shut_down.WaitForNotificationWithTimeout(absl::Seconds(60));
  EXPECT_TRUE(ended) << "the server still runs a cancelled step";
  if (!ended) worker_.Shutdown(errors::Aborted("test"));  // ends the steps: Shutdown returns
  shutdown.join();
}

// The bulk port's side of it: a client that hangs up on its RunStep or
// RunCallable cancels the step (blocked in a _Recv that never comes, with
// no timeout), which then answers and leaves the port.
class GrpcSessionBulkTest : public GrpcSessionTest {};
INSTANTIATE_TEST_SUITE_P(Bulk, GrpcSessionBulkTest, ::testing::Values(true));

TEST_P(GrpcSessionBulkTest, ClientHangingUpCancelsTheStep) {
  ASSERT_NE(bulk_, nullptr) << "the bulk port did not start";
  auto stub = RawStub();
  CreateSessionResponse created;
  ASSERT_NO_FATAL_FAILURE(CreateNeverSession(*stub, &created));
  ASSERT_EQ(created.bulk_port(), bulk_->port());
  MakeCallableResponse made;
  ASSERT_NO_FATAL_FAILURE(MakeNeverCallable(*stub, created.session_handle(), &made));

  RunStepRequest run;
  run.set_session_handle(created.session_handle());
  run.add_fetch("never");
  RunCallableRequest call;
  call.set_session_handle(created.session_handle());
  call.set_handle(made.handle());
  // Waits (bounded) until the port waits for `n` steps' answers.
  auto waiting = [&](int64_t n) {
    for (const absl::Time until = absl::Now() + absl::Seconds(20); absl::Now() < until;
         absl::SleepFor(absl::Milliseconds(10))) {
      if (bulk_->calls_waiting() == n) return true;
    }
    return false;
  };
  for (const auto& [method, request] :
       {std::pair<const char*, std::string>{kBulkRunStep, run.SerializeAsString()},
        {kBulkRunCallable, call.SerializeAsString()}}) {
    {
      BulkClient client("127.0.0.1");
      client.CallAsync(bulk_->port(), "", method, request, absl::Now() + absl::Seconds(60),
                       [](absl::Status s, std::string, BulkClient::Fallback) {
                         EXPECT_TRUE(absl::IsCancelled(s)) << s;  // by the client's going
                       });
      ASSERT_TRUE(waiting(1)) << method << " never started";
    }  // hangs up
    EXPECT_TRUE(waiting(0)) << method << ": the step still runs after its client hung up";
  }
}

// A port that cannot be reached costs nothing but the attempt: the step
// goes over gRPC, and so do the session's later ones.
TEST_P(GrpcSessionBulkTest, StepsGoOverGrpcWhenThePortCannotBeReached) {
  ASSERT_NE(bulk_, nullptr) << "the bulk port did not start";
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SquareGraph()));
  bulk_->StopListening();
  for (float v : {2.0f, 3.0f, 4.0f}) {
    std::vector<Tensor> out;
    ASSERT_OK(session->Run({{"x", Tensor::FromVector<float>({v, 1}, {2})}}, {"y"}, {}, &out));
    ExpectTensorEqual<float>(out[0], {v * v, 1}, TensorShape({2}));
  }
  EXPECT_EQ(BulkCalls(), 0);
}

// Bytes that are no request are InvalidArgument naming what was expected,
// final (the client must not send them again over gRPC); an unknown session
// is NotFound, as over gRPC.
TEST_P(GrpcSessionBulkTest, GarbageAndUnknownSessionsAreErrorsNamingThem) {
  ASSERT_NE(bulk_, nullptr) << "the bulk port did not start";
  BulkClient client("127.0.0.1");
  RunCallableRequest unknown;
  unknown.set_session_handle("no-such-session");
  for (const auto& [method, request, code, says] :
       {std::tuple<const char*, std::string, absl::StatusCode, const char*>{
            kBulkRunStep, std::string("\x0a\xff\xff\xff\xff\x0f", 6),
            absl::StatusCode::kInvalidArgument, "tensorgrid.RunStepRequest"},
        {kBulkRunCallable, std::string("\x0a\xff\xff\xff\xff\x0f", 6),
         absl::StatusCode::kInvalidArgument, "tensorgrid.RunCallableRequest"},
        {kBulkRunCallable, unknown.SerializeAsString(), absl::StatusCode::kNotFound,
         "no-such-session"}}) {
    absl::Notification done;
    client.CallAsync(
        bulk_->port(), "", method, request, absl::Now() + absl::Seconds(20),
        [&, code = code, says = says](absl::Status s, std::string, BulkClient::Fallback fallback) {
          EXPECT_EQ(s.code(), code) << s;
          EXPECT_NE(s.message().find(says), std::string::npos) << s;
          EXPECT_EQ(fallback, BulkClient::Fallback::kNone);
          done.Notify();
        });
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  }
  // The port still serves a real session.
  auto session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SquareGraph()));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x", Tensor::FromVector<float>({5, 1}, {2})}}, {"y"}, {}, &out));
  EXPECT_EQ(BulkCalls(), 4);
}

// A master service that closes sessions by itself (session_gc,
// max_sessions), on a free loopback port over one Worker.
class GrpcSessionGcTest : public ::testing::Test {
 protected:
  void Start(const GrpcMasterService::Options& options) {
    service_ = std::make_unique<GrpcMasterService>(
        [this](const ConfigProto& config) {
          return std::make_unique<Master>(config, &worker_, kTask);
        },
        &door_, options);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    door_.RegisterOn(&builder);
    server_ = builder.BuildAndStart();
    address_ = "127.0.0.1:" + std::to_string(port);
  }
  ~GrpcSessionGcTest() override {
    if (server_ != nullptr) server_->Shutdown();
  }
  std::unique_ptr<Session> Open() {
    SessionOptions options;
    options.target = "grpc://" + address_;
    auto session = NewSession(options);
    EXPECT_TRUE(session.ok()) << session.status();
    if (!session.ok()) return nullptr;
    EXPECT_OK((*session)->Create(SquareGraph()));
    return *std::move(session);
  }
  static absl::Status Step(Session& session) {
    std::vector<Tensor> out;
    return session.Run({{"x", Tensor::FromVector<float>({2, 3}, {2})}}, {"y"}, {}, &out);
  }

  Worker worker_{kTask, ConfigProto()};
  GrpcFrontDoor door_{GrpcFrontDoor::Options()};
  std::unique_ptr<GrpcMasterService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

TEST_F(GrpcSessionGcTest, AnIdleSessionIsClosedAndItsClientToldWhy) {
  GrpcMasterService::Options options;
  options.session_gc = absl::Milliseconds(200);
  Start(options);
  std::unique_ptr<Session> idle = Open();
  ASSERT_NE(idle, nullptr);
  ASSERT_OK(Step(*idle));
  absl::SleepFor(absl::Seconds(2));  // ten times the limit
  EXPECT_STATUS(Step(*idle), kNotFound,
                "was closed by this master: it was idle for 200ms (session_gc_seconds)");
}

TEST_F(GrpcSessionGcTest, ASessionWithAStepInFlightIsNeverIdle) {
  GrpcMasterService::Options options;
  options.session_gc = absl::Milliseconds(100);
  Start(options);
  auto stub =
      MasterService::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  CreateSessionResponse created;
  CreateNeverSession(*stub, &created);
  MakeCallableResponse made;
  MakeNeverCallable(*stub, created.session_handle(), &made);
  RunCallableRequest run;
  run.set_session_handle(created.session_handle());
  run.set_handle(made.handle());
  RunCallableResponse ran;
  grpc::ClientContext step;
  SetDeadline(&step, absl::Seconds(60));
  absl::Notification ended;
  grpc::Status step_status;
  stub->async()->RunCallable(&step, &run, &ran, [&](grpc::Status s) {
    step_status = std::move(s);
    ended.Notify();
  });
  absl::SleepFor(absl::Seconds(1));
  std::unique_ptr<Session> other = Open();  // any call collects
  ASSERT_NE(other, nullptr);
  // Still there: another call on it works.
  MakeCallableResponse again;
  MakeNeverCallable(*stub, created.session_handle(), &again);
  step.TryCancel();
  ASSERT_TRUE(ended.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(step_status.error_code(), grpc::StatusCode::CANCELLED) << step_status.error_message();
}

TEST_F(GrpcSessionGcTest, OneSessionTooManyClosesTheLeastRecentlyUsedIdleOne) {
  GrpcMasterService::Options options;
  options.max_sessions = 2;
  options.min_idle_to_evict = absl::ZeroDuration();
  Start(options);
  std::unique_ptr<Session> a = Open();
  std::unique_ptr<Session> b = Open();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_OK(Step(*b));
  ASSERT_OK(Step(*a));  // a is now the more recently used
  std::unique_ptr<Session> c = Open();
  ASSERT_NE(c, nullptr);
  EXPECT_STATUS(Step(*b), kNotFound, "least recently used of 2 open sessions (max_sessions)");
  EXPECT_OK(Step(*a));
  EXPECT_OK(Step(*c));
}

TEST_F(GrpcSessionGcTest, OneSessionTooManyWithNoneIdleIsResourceExhausted) {
  GrpcMasterService::Options options;
  options.max_sessions = 1;
  Start(options);  // only sessions idle for a minute make room
  std::unique_ptr<Session> a = Open();
  ASSERT_NE(a, nullptr);
  SessionOptions session_options;
  session_options.target = "grpc://" + address_;
  auto b = NewSession(session_options);
  ASSERT_OK(b.status());
  EXPECT_STATUS((*b)->Create(SquareGraph()), kResourceExhausted,
                "this master has 1 sessions open (max_sessions), none idle for 1m");
  EXPECT_OK(Step(*a));
}

TEST_P(GrpcSessionTest, ServiceRejectsUnknownHandlesAndBadFeeds) {
  auto stub = RawStub();
  auto deadline = [](grpc::ClientContext* c) { SetDeadline(c, absl::Seconds(10)); };

  CreateSessionRequest create;
  *create.mutable_graph_def() = SquareGraph();
  CreateSessionResponse created;
  grpc::ClientContext c1;
  deadline(&c1);
  ASSERT_TRUE(stub->CreateSession(&c1, create, &created).ok());
  ASSERT_FALSE(created.session_handle().empty());

  RunStepRequest run;
  run.set_session_handle(created.session_handle());
  run.add_fetch("y");
  NamedTensorProto* feed = run.add_feed();
  feed->set_name("x");
  feed->mutable_tensor()->set_dtype(DT_FLOAT);
  feed->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(2);
  feed->mutable_tensor()->set_tensor_content(std::string(3, '\0'));  // 8 bytes expected
  RunStepResponse response;
  grpc::ClientContext c2;
  deadline(&c2);
  EXPECT_STATUS(FromGrpcStatus(stub->RunStep(&c2, run, &response)), kInvalidArgument, "feed 'x'");

  CloseSessionRequest close;
  close.set_session_handle(created.session_handle());
  CloseSessionResponse closed;
  grpc::ClientContext c3;
  deadline(&c3);
  ASSERT_TRUE(stub->CloseSession(&c3, close, &closed).ok());

  grpc::ClientContext c4;
  deadline(&c4);
  EXPECT_STATUS(FromGrpcStatus(stub->RunStep(&c4, run, &response)), kNotFound,
                created.session_handle());

  ListDevicesRequest list;
  list.set_session_handle(created.session_handle());  // closed above
  ListDevicesResponse devices;
  grpc::ClientContext c5;
  deadline(&c5);
  EXPECT_STATUS(FromGrpcStatus(stub->ListDevices(&c5, list, &devices)), kNotFound,
                created.session_handle());
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

std::string TlsFile(const std::string& name) { return "tests/testdata/tls/" + name; }

RpcSecurity Load(const std::string& token_file, const std::string& ca, const std::string& cert,
                 const std::string& key) {
  absl::StatusOr<RpcSecurity> s = RpcSecurity::FromFiles(token_file, ca, cert, key);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : RpcSecurity();
}

std::string WriteToken(const std::string& name, const std::string& token) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir == nullptr ? "/tmp" : dir) + "/" + name;
  std::ofstream(path) << token << "\n";
  return path;
}

// Sets the client's TG_* variables for the life of the object.
class ClientEnv {
 public:
  ClientEnv(const std::string& token_file, const std::string& ca, const std::string& cert,
            const std::string& key) {
    Set("TG_AUTH_TOKEN_FILE", token_file);
    Set("TG_TLS_CA_FILE", ca);
    Set("TG_TLS_CERT_FILE", cert);
    Set("TG_TLS_KEY_FILE", key);
  }
  ~ClientEnv() {
    for (const char* name :
         {"TG_AUTH_TOKEN_FILE", "TG_TLS_CA_FILE", "TG_TLS_CERT_FILE", "TG_TLS_KEY_FILE"}) {
      unsetenv(name);
    }
  }

 private:
  static void Set(const char* name, const std::string& value) {
    if (value.empty()) {
      unsetenv(name);
    } else {
      setenv(name, value.c_str(), 1);
    }
  }
};

// A master service on 127.0.0.1 with the given security, as Server sets it up.
class SecureMaster {
 public:
  explicit SecureMaster(const RpcSecurity& security)
      : worker_(kTask, ConfigProto()),
        door_([&] {
          GrpcFrontDoor::Options options;
          options.auth_token = security.auth_token;
          return options;
        }()),
        service_(
            [this](const ConfigProto& config) {
              return std::make_unique<Master>(config, &worker_, kTask);
            },
            &door_) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", ServerCredentials(security), &port);
    door_.RegisterOn(&builder);
    server_ = builder.BuildAndStart();
    address_ = "127.0.0.1:" + std::to_string(port);
  }
  ~SecureMaster() { server_->Shutdown(); }

  const std::string& address() const { return address_; }

  // Creates a session and runs y = Square(x) once, with the client's
  // credentials from the environment.
  absl::Status Use() {
    SessionOptions options;
    options.target = "grpc://" + address_;
    options.config.set_operation_timeout_in_ms(10000);
    TG_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
    TG_RETURN_IF_ERROR(session->Create(SquareGraph()));
    std::vector<Tensor> out;
    TG_RETURN_IF_ERROR(
        session->Run({{"x", Tensor::FromVector<float>({2, 3}, {2})}}, {"y"}, {}, &out));
    ExpectTensorEqual<float>(out[0], {4, 9}, TensorShape({2}));
    return session->Close();
  }

 private:
  Worker worker_;
  GrpcFrontDoor door_;
  GrpcMasterService service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

TEST(GrpcSecurityTest, TokenIsRequiredOnEveryCall) {
  SecureMaster master(Load(WriteToken("server_token", "s3cret"), "", "", ""));
  {
    ClientEnv none("", "", "", "");
    EXPECT_STATUS(master.Use(), kUnauthenticated, "requires an auth token; the call carried none");
  }
  {
    ClientEnv wrong(WriteToken("wrong_token", "guess"), "", "", "");
    EXPECT_STATUS(master.Use(), kUnauthenticated, "auth token does not match");
  }
  ClientEnv right(WriteToken("client_token", "s3cret"), "", "", "");
  EXPECT_OK(master.Use());
}

TEST(GrpcSecurityTest, TlsServerAndClientCheckingItsCertificate) {
  SecureMaster master(Load("", "", TlsFile("server.pem"), TlsFile("server.key")));
  {
    ClientEnv plain("", "", "", "");  // a plaintext client cannot talk to a TLS port
    EXPECT_STATUS(master.Use(), kUnavailable, master.address());
  }
  {
    ClientEnv untrusted("", TlsFile("other_ca.pem"), "", "");
    EXPECT_STATUS(master.Use(), kUnavailable, master.address());
  }
  ClientEnv trusted("", TlsFile("ca.pem"), "", "");
  EXPECT_OK(master.Use());
}

TEST(GrpcSecurityTest, MutualTlsRequiresAClientCertificate) {
  SecureMaster master(Load("", TlsFile("ca.pem"), TlsFile("server.pem"), TlsFile("server.key")));
  {
    ClientEnv no_cert("", TlsFile("ca.pem"), "", "");
    EXPECT_STATUS(master.Use(), kUnavailable, master.address());
  }
  ClientEnv with_cert("", TlsFile("ca.pem"), TlsFile("client.pem"), TlsFile("client.key"));
  EXPECT_OK(master.Use());
}

TEST(GrpcSecurityTest, TokenAndMutualTlsTogether) {
  SecureMaster master(Load(WriteToken("both_token", "t0ken"), TlsFile("ca.pem"),
                           TlsFile("server.pem"), TlsFile("server.key")));
  ClientEnv client(WriteToken("both_client_token", "t0ken"), TlsFile("ca.pem"),
                   TlsFile("client.pem"), TlsFile("client.key"));
  EXPECT_OK(master.Use());
}

// Bytes that are no protobuf message, sent to every method: InvalidArgument
// naming the method, and the server goes on serving.
TEST(GrpcSecurityTest, GarbageRequestsAreInvalidArgumentAndTheServerKeepsServing) {
  SecureMaster master(RpcSecurity{});
  ClientEnv none("", "", "", "");
  grpc::GenericStub stub(grpc::CreateChannel(master.address(), grpc::InsecureChannelCredentials()));
  const std::string garbage = "\xff\xff\xff\xff\x0f garbage \x01\x02";
  for (const char* method :
       {"CreateSession", "ExtendSession", "RunStep", "MakeCallable", "RunCallable",
        "ReleaseCallable", "CloseSession", "ListDevices", "Reset"}) {
    const std::string path = std::string("/tensorgrid.MasterService/") + method;
    grpc::Slice slice(garbage);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    grpc::ClientContext context;
    SetDeadline(&context, absl::Seconds(30));
    grpc::Status status;
    absl::Notification done;
    stub.UnaryCall(&context, path, grpc::StubOptions(), &request, &response, [&](grpc::Status s) {
      status = std::move(s);
      done.Notify();
    });
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60)));
    EXPECT_STATUS(FromGrpcStatus(status), kInvalidArgument,
                  "request to " + path + " is not a valid message");
  }
  EXPECT_OK(master.Use());
}

}  // namespace
}  // namespace tensorgrid
