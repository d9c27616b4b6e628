// A real Worker behind GrpcWorkerService on a loopback port, driven through
// GrpcRemoteWorker the way a Master drives the in-process one.
//
//   Master ──► GrpcRemoteWorker ══ gRPC, 127.0.0.1:<free port> ══►
//   GrpcWorkerService ──► Worker
//                                                                   /job:worker/replica:0/task:0
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/framework/attr_value_util.h"
#include "core/runtime/master.h"
#include "core/runtime/worker.h"
#include "distributed/rpc/grpc_remote_worker.h"
#include "distributed/rpc/grpc_worker_service_factory.h"
#include "distributed/rpc/grpc_worker_test_raw.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

constexpr char kTask[] = "/job:worker/replica:0/task:0";
constexpr char kCpu[] = "/job:worker/replica:0/task:0/device:CPU:0";

class GrpcWorkerTest : public ::testing::Test {
 protected:
  GrpcWorkerTest() : worker_(kTask, ConfigProto()), service_(NewGrpcWorkerService(&worker_)) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    address_ = "127.0.0.1:" + std::to_string(port);
    remote_ = std::make_unique<GrpcRemoteWorker>(address_);
  }
  ~GrpcWorkerTest() override { server_->Shutdown(); }

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

  std::string RegisterSquareGraph() {
    RegisterGraphArgs request;
    request.graph = SquareGraph();
    RegisterGraphResult response;
    absl::Status s = remote_->RegisterGraph(request, &response);
    EXPECT_TRUE(s.ok()) << s;
    return response.graph_handle;
  }

  Worker worker_;
  std::unique_ptr<grpc::Service> service_;
  std::unique_ptr<grpc::Server> server_;
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
  const std::string handle = RegisterSquareGraph();
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
  const std::string handle = RegisterSquareGraph();
  grpc::Status s = RawRunGraph(address_, handle, "0", /*malformed=*/true);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("feed 0"), std::string::npos) << s.error_message();

  s = RawRunGraph(address_, handle, "3", /*malformed=*/false);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("feed '3'"), std::string::npos) << s.error_message();

  s = RawRunGraph(address_, handle, "zero", /*malformed=*/false);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();

  s = RawRunGraph(address_, handle, "0", /*malformed=*/false);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(GrpcWorkerTest, RecvTensorOfAKeyNobodySendsIsDeadlineExceededNamingTheKey) {
  // The server answers just before the client's deadline, so the message is
  // its own (naming the key), not the client's bare "Deadline Exceeded".
  grpc::Status s = RawRecvTensor(address_, "a;0;b;never-sent;0:0", absl::Seconds(1));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_NE(s.error_message().find("'a;0;b;never-sent;0:0'"), std::string::npos)
      << s.error_message();
}

TEST_F(GrpcWorkerTest, RecvTensorOfACleanedUpStepKeepsTheWorkersStatus) {
  // A step cleaned up while a receive waits: the worker's Aborted status
  // crosses the wire with its code.
  Tensor tensor;
  absl::Notification done;
  absl::Status status;
  remote_->RecvTensorAsync(3, "a;0;b;t;0:0", &tensor, [&](absl::Status s) {
    status = std::move(s);
    done.Notify();
  });
  // Clean up until the request has reached the worker's rendezvous.
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  do {
    ASSERT_OK(worker_.CleanupGraph(3));
  } while (!done.WaitForNotificationWithTimeout(absl::Milliseconds(100)) && absl::Now() < give_up);
  ASSERT_TRUE(done.HasBeenNotified());
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
  EXPECT_NE(status.message().find("RecvTensor of 'a;0;b;t;0:0' on worker " + address_),
            std::string::npos)
      << status;
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
}

}  // namespace
}  // namespace tensorgrid
