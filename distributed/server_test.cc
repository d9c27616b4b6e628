// Three Servers in one process form the seed cluster on loopback ports; a
// grpc:// session on worker 0 runs the seed example across all three:
//
//   /job:ps/task:0          /job:worker/task:0        /job:worker/task:1
//   x, y (variables) ══x,y══► z1b = x·y + x ══z1b══► z2b = z1b·x + x
//                    ══════════════════ x ═════════►
//
//   client ══ grpc://127.0.0.1:<worker 0> ══► Server(worker 0): Master ──► Workers
#include "distributed/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/framework/attr_value_util.h"
#include "core/platform/free_port.h"
#include "core/platform/status.h"
#include "core/public/session.h"
#include "distributed/server_testutil.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

ClusterSpecOptions AllowPortZero() {
  ClusterSpecOptions options;
  options.allow_port_zero = true;
  return options;
}

GraphDef SeedGraph() {
  std::ifstream in("tests/testdata/seed_placement.pbtxt");
  std::stringstream text;
  text << in.rdbuf();
  GraphDef g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text.str(), &g));
  return g;
}

std::unique_ptr<Server> StartServer(const ClusterSpec& cluster, const std::string& job, int index) {
  absl::StatusOr<std::unique_ptr<Server>> server = TryStartServer(cluster, job, index);
  EXPECT_OK(server.status());
  return server.ok() ? *std::move(server) : nullptr;
}

// Started servers of a cluster whose task i belongs to job `jobs[i]` (each
// job's tasks numbered in order), on free loopback ports, picked again when
// a server cannot bind one; in that order, or none (with a test failure).
std::vector<std::unique_ptr<Server>> StartOnFreePorts(const std::vector<std::string>& jobs) {
  std::vector<std::unique_ptr<Server>> servers;
  auto stop = [&] {
    for (auto& server : servers) server->Stop();
    servers.clear();
  };
  const int n = static_cast<int>(jobs.size());
  EXPECT_OK(WithFreeLoopbackAddresses(n, [&](const std::vector<std::string>& a) {
    stop();
    std::map<std::string, std::vector<std::string>> spec;
    for (int i = 0; i < n; ++i) spec[jobs[i]].push_back(a[i]);
    TG_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpec::FromMap(spec));
    std::map<std::string, int> next;
    for (const std::string& job : jobs) {
      absl::StatusOr<std::unique_ptr<Server>> server = TryStartServer(cluster, job, next[job]++);
      if (!server.ok()) {
        stop();
        return server.status();
      }
      servers.push_back(*std::move(server));
    }
    return absl::OkStatus();
  }));
  return servers;
}

// A grpc:// session on `server` with `graph`, after running `inits`; null
// (the failure reported) when any of it fails.
std::unique_ptr<Session> OpenSession(const Server& server, const GraphDef& graph,
                                     const std::vector<std::string>& inits) {
  SessionOptions options;
  options.target = server.target();
  auto session = NewSession(options);
  EXPECT_OK(session.status());
  if (!session.ok()) return nullptr;
  absl::Status ready = (*session)->Create(graph);
  if (ready.ok()) ready = (*session)->Run({}, {}, inits, nullptr);
  EXPECT_OK(ready);
  return ready.ok() ? std::move(session).value() : nullptr;
}

// The seed example's cluster on free loopback ports: ps 0, worker 0, worker 1.
std::vector<std::unique_ptr<Server>> StartSeedCluster() {
  return StartOnFreePorts({"ps", "worker", "worker"});
}

TEST(ServerTest, SeedExampleRunsOnAThreeTaskCluster) {
  std::vector<std::unique_ptr<Server>> servers = StartSeedCluster();
  ASSERT_EQ(servers.size(), 3u);
  for (const auto& s : servers) ASSERT_NE(s, nullptr);
  EXPECT_EQ(servers[1]->task(), "/job:worker/replica:0/task:0");
  EXPECT_TRUE(absl::StartsWith(servers[1]->address(), "127.0.0.1:")) << servers[1]->address();
  EXPECT_EQ(servers[1]->target(), "grpc://" + servers[1]->address());

  std::unique_ptr<Session> session =
      OpenSession(*servers[1], SeedGraph(), {"x/Assign", "y/Assign"});
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> out;
  for (int step = 0; step < 3; ++step) {
    ASSERT_OK(session->Run({}, {"z2b"}, {}, &out));
    // x = y = ones: z1b = x·y + x = 3s; z2b = z1b·x + x = 7s.
    ExpectTensorEqual<float>(out[0], {7, 7, 7, 7}, TensorShape({2, 2}));
  }
  // Unequal x and y, so that a tensor transposed or reordered between tasks
  // shows: x = [[1, 2], [3, 4]], y = [[5, 6], [7, 8]]; z1b = x·y + x =
  // [[20, 24], [46, 54]]; z2b = z1b·x + x = [[93, 138], [211, 312]].
  ASSERT_OK(session->Run({{"x/initial_value", Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})},
                          {"y/initial_value", Tensor::FromVector<float>({5, 6, 7, 8}, {2, 2})}},
                         {}, {"x/Assign", "y/Assign"}, &out));
  ASSERT_OK(session->Run({}, {"z2b"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {93, 138, 211, 312}, TensorShape({2, 2}));
  EXPECT_OK(session->Close());
  for (auto& s : servers) s->Stop();
}

// Worker 0's partition takes x and y from the ps: one request a step, each
// tensor answered as the ps sends it. Worker 1's takes x from the ps and z1b
// from worker 0: one tensor from each, asked for on its own.
TEST(ServerTest, AStepsReceivesFromOneTaskTravelInOneRequest) {
  std::vector<std::unique_ptr<Server>> servers = StartSeedCluster();
  ASSERT_EQ(servers.size(), 3u);
  for (const auto& s : servers) ASSERT_NE(s, nullptr);
  std::unique_ptr<Session> session =
      OpenSession(*servers[1], SeedGraph(), {"x/Assign", "y/Assign"});
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> out;
  std::vector<int64_t> batches, fetches;
  auto count = [&] {
    batches.clear();
    fetches.clear();
    for (const auto& s : servers) {
      batches.push_back(s->bulk_tensor_batches());
      fetches.push_back(s->bulk_fetches());
    }
  };
  // Worker 1 learns its peers' bulk ports in the background (GetStatus,
  // after its first receive from each); until then its receives go over
  // gRPC. Steps until one takes the bulk port everywhere.
  bool warm = false;
  for (int step = 0; step < 200 && !warm; ++step) {
    count();
    ASSERT_OK(session->Run({}, {"z2b"}, {}, &out));
    warm = servers[0]->bulk_fetches() - fetches[0] == 3 && servers[1]->bulk_fetches() > fetches[1];
    if (!warm) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_TRUE(warm) << "200 steps and worker 1 still receives over gRPC";
  count();
  for (int step = 0; step < 3; ++step) {
    ASSERT_OK(session->Run({}, {"z2b"}, {}, &out));
    ExpectTensorEqual<float>(out[0], {7, 7, 7, 7}, TensorShape({2, 2}));
  }
  EXPECT_EQ(servers[0]->bulk_tensor_batches() - batches[0], 3);
  EXPECT_EQ(servers[0]->bulk_fetches() - fetches[0], 9);  // x, y to worker 0; x to worker 1
  EXPECT_EQ(servers[1]->bulk_tensor_batches() - batches[1], 0);
  EXPECT_EQ(servers[1]->bulk_fetches() - fetches[1], 3);  // z1b to worker 1
  EXPECT_OK(session->Close());
  for (auto& s : servers) s->Stop();
}

// More tensors from one task than one request carries (4,096): the step
// asks in two, and every tensor arrives where its receive wants it.
TEST(ServerTest, AStepReadingThousandsOfVariablesFromOneTaskAsksInRunsThatFit) {
  std::vector<std::unique_ptr<Server>> servers = StartOnFreePorts({"ps", "worker"});
  ASSERT_EQ(servers.size(), 2u);
  std::unique_ptr<Server> ps_server = std::move(servers[0]);
  std::unique_ptr<Server> worker = std::move(servers[1]);
  constexpr int kVariables = 4100;
  GraphDef graph;
  auto add = [&](const std::string& name, const std::string& op, const std::string& device,
                 std::vector<std::string> inputs) {
    NodeDef* n = graph.add_node();
    n->set_name(name);
    n->set_op(op);
    n->set_device(device);
    for (const std::string& in : inputs) n->add_input(in);
    return n;
  };
  std::vector<std::string> inits, reads;
  for (int i = 0; i < kVariables; ++i) {
    const std::string v = absl::StrCat("v", i);
    NodeDef* var = add(v, "VariableV2", "/job:ps/task:0", {});
    SetAttr(var, "dtype", DT_FLOAT);
    SetAttr(var, "shape", TensorShape({}));
    NodeDef* value = add(v + "/value", "Const", "/job:ps/task:0", {});
    SetAttr(value, "dtype", DT_FLOAT);
    SetAttr(value, "value", Tensor::Scalar<float>(static_cast<float>(i)));
    SetAttr(add(v + "/Assign", "Assign", "/job:ps/task:0", {v, v + "/value"}), "T", DT_FLOAT);
    SetAttr(add(v + "/read", "Identity", "/job:worker/task:0", {v}), "T", DT_FLOAT);
    inits.push_back(v + "/Assign");
    reads.push_back(v + "/read");
  }
  NodeDef* sum = add("sum", "AddN", "/job:worker/task:0", reads);
  SetAttr(sum, "T", DT_FLOAT);
  SetAttr(sum, "N", static_cast<int64_t>(kVariables));
  std::unique_ptr<Session> session = OpenSession(*worker, graph, inits);
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({}, {"sum"}, {}, &out));  // registers the partitions
  const int64_t before = ps_server->bulk_tensor_batches();
  ASSERT_OK(session->Run({}, {"sum"}, {}, &out));
  EXPECT_EQ(out[0].scalar<float>(), kVariables * (kVariables - 1) / 2.0f);
  EXPECT_EQ(ps_server->bulk_tensor_batches() - before, 2);
  EXPECT_OK(session->Close());
  worker->Stop();
  ps_server->Stop();
}

// A task that was away for a while and comes back is reached within
// seconds: the master's channel to it tries again at least every second,
// where gRPC's own backoff would have grown past ten seconds by then.
TEST(ServerTest, ATaskBackAfterALongAbsenceIsReachedWithinSeconds) {
  std::vector<int> reserved;  // the ps's port: bound, not listening (refused)
  const std::vector<int> ports = ReserveFreePorts(3, &reserved);
  ASSERT_EQ(ports.size(), 3u);
  auto address = [&](int i) { return absl::StrCat("127.0.0.1:", ports[i]); };
  absl::StatusOr<ClusterSpec> cluster =
      ClusterSpec::FromMap({{"ps", {address(0)}}, {"worker", {address(1), address(2)}}});
  ASSERT_OK(cluster.status());
  close(reserved[1]);
  close(reserved[2]);
  auto worker0 = StartServer(*cluster, "worker", 0);
  auto worker1 = StartServer(*cluster, "worker", 1);
  ASSERT_NE(worker0, nullptr);
  ASSERT_NE(worker1, nullptr);
  // The master tries to reach the ps for 20 s.
  SessionOptions options;
  options.target = worker0->target();
  options.config.set_operation_timeout_in_ms(20000);
  auto away = NewSession(options);
  ASSERT_OK(away.status());
  EXPECT_STATUS((*away)->Create(SeedGraph()), kUnavailable, "/job:ps/replica:0/task:0");
  close(reserved[0]);
  auto ps = StartServer(*cluster, "ps", 0);
  ASSERT_NE(ps, nullptr);
  options.config.set_operation_timeout_in_ms(5000);
  auto back = NewSession(options);
  ASSERT_OK(back.status());
  ASSERT_OK((*back)->Create(SeedGraph()));
  std::vector<Tensor> out;
  ASSERT_OK((*back)->Run({}, {}, {"x/Assign", "y/Assign"}, &out));
  ASSERT_OK((*back)->Run({}, {"z2b"}, {}, &out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data<float>()[0], 7);
}

TEST(ServerTest, PortZeroReportsTheRealPort) {
  auto cluster = ClusterSpec::FromFlag("worker=localhost:0", AllowPortZero());
  ASSERT_OK(cluster.status());
  std::unique_ptr<Server> server = StartServer(*cluster, "worker", 0);
  ASSERT_NE(server, nullptr);
  const std::string address = server->address();
  EXPECT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;
  EXPECT_NE(address, "127.0.0.1:0");

  // A one-task cluster serves a session by itself.
  SessionOptions options;
  options.target = server->target();
  auto session = NewSession(options);
  ASSERT_OK(session.status());
  GraphDef empty;
  ASSERT_OK((*session)->Create(empty));
  EXPECT_OK((*session)->Close());
}

TEST(ServerTest, BulkPortUnlessTurnedOffOrTls) {
  auto cluster = ClusterSpec::FromFlag("worker=localhost:0", AllowPortZero());
  ASSERT_OK(cluster.status());
  std::unique_ptr<Server> server = StartServer(*cluster, "worker", 0);
  ASSERT_NE(server, nullptr);
  EXPECT_GT(server->bulk_port(), 0);
  server->Stop();
  EXPECT_EQ(server->bulk_port(), 0);  // closed with the server

  ServerOptions off;
  off.bulk_transfer = false;
  const std::string dir = "tests/testdata/tls/";
  absl::StatusOr<RpcSecurity> tls =
      RpcSecurity::FromFiles("", dir + "ca.pem", dir + "server.pem", dir + "server.key");
  ASSERT_OK(tls.status());
  ServerOptions with_tls;
  with_tls.security = *tls;
  for (const ServerOptions& options : {off, with_tls}) {
    auto s = Server::Create(*cluster, "worker", 0, ConfigProto(), options);
    ASSERT_OK(s.status());
    ASSERT_OK((*s)->Start());
    EXPECT_EQ((*s)->bulk_port(), 0);
  }
}

// A fixed bulk port (for firewalls): the gRPC port plus an offset; a port
// that is taken, or an offset with no fixed gRPC port, fails Start.
// A worker task at 127.0.0.1:`grpc_port` whose bulk port is `offset` above.
absl::StatusOr<std::unique_ptr<Server>> WorkerAtOffset(int grpc_port, int offset) {
  TG_ASSIGN_OR_RETURN(ClusterSpec cluster,
                      ClusterSpec::FromFlag(absl::StrCat("worker=127.0.0.1:", grpc_port)));
  ServerOptions options;
  options.bulk_port_offset = offset;
  return Server::Create(cluster, "worker", 0, ConfigProto(), options);
}

TEST(ServerTest, BulkPortAtAnOffsetFromTheGrpcPort) {
  // Two free ports; the offset joins the lower to the higher.
  const std::vector<int> two = FreePorts(2);  // distinct, unlike two FreePort()s
  ASSERT_EQ(two.size(), 2u);
  int grpc_port = std::min(two[0], two[1]), bulk_port = std::max(two[0], two[1]);
  ASSERT_LT(grpc_port, bulk_port);
  {
    auto server = WorkerAtOffset(grpc_port, bulk_port - grpc_port);
    ASSERT_OK(server.status());
    ASSERT_OK((*server)->Start());
    EXPECT_EQ((*server)->bulk_port(), bulk_port);
    // Taken: the second server cannot have it.
    int grpc_port2 = FreePort();
    for (int tries = 0; tries < 100 && grpc_port2 >= bulk_port; ++tries) grpc_port2 = FreePort();
    ASSERT_LT(grpc_port2, bulk_port);
    auto second = WorkerAtOffset(grpc_port2, bulk_port - grpc_port2);
    ASSERT_OK(second.status());
    EXPECT_STATUS((*second)->Start(), kUnavailable,
                  absl::StrCat("bulk port: cannot listen on 127.0.0.1 port ", bulk_port));
  }
  auto cluster = ClusterSpec::FromFlag(absl::StrCat("worker=127.0.0.1:", grpc_port));
  ASSERT_OK(cluster.status());
  // The environment's offset when the option is left at -1.
  setenv("TG_BULK_PORT_OFFSET", "x", 1);
  auto from_env = Server::Create(*cluster, "worker", 0, ConfigProto());
  ASSERT_OK(from_env.status());
  EXPECT_STATUS((*from_env)->Start(), kInvalidArgument, "TG_BULK_PORT_OFFSET='x'");
  unsetenv("TG_BULK_PORT_OFFSET");
  // No fixed gRPC port to count from.
  auto any = ClusterSpec::FromFlag("worker=localhost:0", AllowPortZero());
  ASSERT_OK(any.status());
  ServerOptions options;
  options.bulk_port_offset = bulk_port - grpc_port;
  auto zero = Server::Create(*any, "worker", 0, ConfigProto(), options);
  ASSERT_OK(zero.status());
  EXPECT_STATUS((*zero)->Start(), kInvalidArgument, "is not a port");
}

// A step blocked for good (a _Recv whose _Send never comes, no timeout)
// fails with the shutdown's reason when the server stops under it.
TEST(ServerTest, StopFailsTheRunningStepNamingTheTask) {
  auto cluster = ClusterSpec::FromFlag("worker=localhost:0", AllowPortZero());
  ASSERT_OK(cluster.status());
  std::unique_ptr<Server> server = StartServer(*cluster, "worker", 0);
  ASSERT_NE(server, nullptr);
  GraphDef g;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        node {
          name: "never"
          op: "_Recv"
          device: "/job:worker/replica:0/task:0/device:CPU:0"
          attr {
            key: "tensor_type"
            value { type: DT_FLOAT }
          }
          attr {
            key: "tensor_name"
            value { s: "never_sent" }
          }
          attr {
            key: "send_device"
            value { s: "/job:worker/replica:0/task:0/device:CPU:0" }
          }
          attr {
            key: "send_device_incarnation"
            value { i: 1 }
          }
          attr {
            key: "recv_device"
            value { s: "/job:worker/replica:0/task:0/device:CPU:0" }
          }
        })pb",
      &g));
  SessionOptions options;
  options.target = server->target();
  auto session = NewSession(options);
  ASSERT_OK(session.status());
  ASSERT_OK((*session)->Create(g));
  absl::Notification ran;
  absl::Status status;
  std::thread client([&] {
    std::vector<Tensor> out;
    status = (*session)->Run({}, {"never"}, {}, &out);
    ran.Notify();
  });
  EXPECT_FALSE(ran.WaitForNotificationWithTimeout(absl::Milliseconds(200)));
  server->Stop();
  EXPECT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
  client.join();
  EXPECT_STATUS(status, kAborted, "task /job:worker/replica:0/task:0 is shutting down");
}

TEST(ServerTest, PortInUseIsUnavailableNamingTheAddress) {
  const std::string address = absl::StrCat("127.0.0.1:", FreePort());
  auto cluster = ClusterSpec::FromFlag("worker=" + address);
  ASSERT_OK(cluster.status());
  std::unique_ptr<Server> first = StartServer(*cluster, "worker", 0);
  ASSERT_NE(first, nullptr);
  auto second = Server::Create(*cluster, "worker", 0, ConfigProto());
  ASSERT_OK(second.status());
  EXPECT_STATUS((*second)->Start(), kUnavailable, address);
  // The first one keeps serving.
  EXPECT_EQ(first->address(), address);
}

TEST(ServerTest, UnknownTaskIsInvalidArgument) {
  auto cluster = ClusterSpec::FromFlag("worker=127.0.0.1:2223");
  ASSERT_OK(cluster.status());
  auto server = Server::Create(*cluster, "worker", 3, ConfigProto());
  EXPECT_STATUS(server.status(), kInvalidArgument, "/job:worker/replica:0/task:3");
  server = Server::Create(*cluster, "ps", 0, ConfigProto());
  EXPECT_STATUS(server.status(), kInvalidArgument, "/job:ps/replica:0/task:0");
}

TEST(ServerTest, StartTwiceIsFailedPreconditionAndStopIsIdempotent) {
  auto cluster = ClusterSpec::FromFlag("worker=localhost:0", AllowPortZero());
  ASSERT_OK(cluster.status());
  std::unique_ptr<Server> server = StartServer(*cluster, "worker", 0);
  ASSERT_NE(server, nullptr);
  EXPECT_STATUS(server->Start(), kFailedPrecondition, "already started");
  std::thread joiner([&] { server->Join(); });
  server->Stop();
  server->Stop();
  joiner.join();
  EXPECT_STATUS(server->Start(), kFailedPrecondition, "already stopped");
}

// The local address a socket of this machine listens on at `port`, from
// /proc/net/tcp and tcp6: "127.0.0.1" (gRPC listens on IPv4 addresses
// through IPv4-mapped IPv6 sockets, "::ffff:127.0.0.1"), "0.0.0.0", "[::]"
// (every interface, both families), another IPv6 address in /proc's hex, or
// empty when nothing listens there.
std::string ListeningAddress(int port) {
  char want[8];
  std::snprintf(want, sizeof(want), ":%04X", port);
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (state != "0A" || local.size() <= 5 || local.substr(local.size() - 5) != want) continue;
      std::string host = local.substr(0, local.size() - 5);
      if (host.size() == 32 && host.substr(0, 24) == "0000000000000000FFFF0000")
        host = host.substr(24);
      if (host == std::string(32, '0')) return "[::]";
      if (host.size() != 8) return host;
      // One 32-bit word in the machine's (little-endian) order.
      const unsigned long word = std::stoul(host, nullptr, 16);
      return absl::StrCat(word & 0xff, ".", (word >> 8) & 0xff, ".", (word >> 16) & 0xff, ".",
                          word >> 24);
    }
  }
  return "";
}

TEST(ServerTest, LocalhostEntryBindsLoopbackOnlyOnBothPorts) {
  auto cluster = ClusterSpec::FromFlag("worker=localhost:0", AllowPortZero());
  ASSERT_OK(cluster.status());
  std::unique_ptr<Server> server = StartServer(*cluster, "worker", 0);
  ASSERT_NE(server, nullptr);
  const std::string address = server->address();
  ASSERT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  EXPECT_EQ(ListeningAddress(port), "127.0.0.1");
  ASSERT_NE(server->bulk_port(), 0);
  EXPECT_EQ(ListeningAddress(server->bulk_port()), "127.0.0.1");
}

TEST(ServerTest, WildcardBindAdvertisesTheClusterEntry) {
  auto cluster = ClusterSpec::FromFlag("worker=localhost:0", AllowPortZero());
  ASSERT_OK(cluster.status());
  ServerOptions options;
  options.bind_host = "0.0.0.0";
  auto server = Server::Create(*cluster, "worker", 0, ConfigProto(), options);
  ASSERT_OK(server.status());
  ASSERT_OK((*server)->Start());
  const std::string address = (*server)->address();
  ASSERT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;  // what peers use, not 0.0.0.0
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  for (int p : {port, (*server)->bulk_port()}) {
    const std::string bound = ListeningAddress(p);
    EXPECT_TRUE(bound == "0.0.0.0" || bound == "[::]") << "port " << p << " bound to " << bound;
  }
  // Reached at the advertised address (loopback).
  SessionOptions session_options;
  session_options.target = (*server)->target();
  auto session = NewSession(session_options);
  ASSERT_OK(session.status());
  auto devices = (*session)->ListDevices();
  ASSERT_OK(devices.status());
  EXPECT_FALSE(devices->empty());
}

// A session on its own process's server (as every MultiWorkerMirrored
// worker has) runs its steps with no socket; bound to every address, and
// dialed at the advertised loopback address, as well.
TEST(ServerTest, StepsOfASessionOnItsOwnProcessesServerTakeNoSocket) {
  for (const char* bind : {"", "0.0.0.0"}) {
    SCOPED_TRACE(bind);
    auto cluster = ClusterSpec::FromFlag("worker=localhost:0", AllowPortZero());
    ASSERT_OK(cluster.status());
    ServerOptions options;
    options.bind_host = bind;
    auto server = Server::Create(*cluster, "worker", 0, ConfigProto(), options);
    ASSERT_OK(server.status());
    ASSERT_OK((*server)->Start());
    GraphDef graph;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        R"pb(node {
               name: "c"
               op: "Const"
               attr {
                 key: "dtype"
                 value { type: DT_FLOAT }
               }
               attr {
                 key: "value"
                 value {
                   tensor {
                     dtype: DT_FLOAT
                     tensor_shape {}
                     float_val: 2
                   }
                 }
               }
             })pb",
        &graph));
    SessionOptions session_options;
    session_options.target = (*server)->target();
    auto session = NewSession(session_options);
    ASSERT_OK(session.status());
    ASSERT_OK((*session)->Create(graph));
    std::vector<Tensor> out;
    for (int step = 0; step < 3; ++step) ASSERT_OK((*session)->Run({}, {"c:0"}, {}, &out));
    EXPECT_EQ(out[0].data<float>()[0], 2);
    EXPECT_GE((*server)->bulk_calls(), 3);
    EXPECT_EQ((*server)->bulk_calls_in_process(), (*server)->bulk_calls());
  }
}

TEST(ServerTest, ExplicitBindHostStillAdvertisesTheClusterEntry) {
  const int port = FreePort();
  auto cluster = ClusterSpec::FromFlag(absl::StrCat("worker=localhost:", port));
  ASSERT_OK(cluster.status());
  ServerOptions options;
  options.bind_host = "127.0.0.1";
  auto server = Server::Create(*cluster, "worker", 0, ConfigProto(), options);
  ASSERT_OK(server.status());
  ASSERT_OK((*server)->Start());
  EXPECT_EQ((*server)->address(), absl::StrCat("127.0.0.1:", port));
  EXPECT_EQ(ListeningAddress(port), "127.0.0.1");
}

TEST(ServerTest, OwnHostThatDoesNotResolveFailsNamingIt) {
  // .invalid never resolves (RFC 6761); nothing is bound.
  auto cluster = ClusterSpec::FromFlag("worker=tg-pod-not-ready.invalid:0", AllowPortZero());
  ASSERT_OK(cluster.status());
  ServerOptions options;
  options.resolve_timeout = absl::Milliseconds(300);
  auto server = Server::Create(*cluster, "worker", 0, ConfigProto(), options);
  ASSERT_OK(server.status());
  EXPECT_STATUS((*server)->Start(), kUnavailable,
                "server of /job:worker/replica:0/task:0: its host 'tg-pod-not-ready.invalid' does "
                "not resolve");
  // Digits and dots never resolve later: no wait.
  options.resolve_timeout = absl::Hours(1);
  options.bind_host = "999.1.1.1";
  server = Server::Create(*cluster, "worker", 0, ConfigProto(), options);
  ASSERT_OK(server.status());
  EXPECT_STATUS((*server)->Start(), kInvalidArgument,
                "server of /job:worker/replica:0/task:0: its host '999.1.1.1' is not an IPv4 "
                "address (four numbers 0..255 separated by dots)");
}

}  // namespace
}  // namespace tensorgrid
