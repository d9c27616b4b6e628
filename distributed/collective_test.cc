// Collectives between tasks over real gRPC: two in-process Servers on free
// loopback ports, one grpc:// session per task run from its own thread, each
// running a CollectiveReduce on its own task's CPU. The group leader is
// worker 0 (TensorFlow's default); task 1 joins and pulls chunks over the
// wire (CompleteGroup, CompleteInstance, RecvBuf).
//
//   /job:worker/task:0 CPU:0  ◄══ ring (RecvBuf) ══►  /job:worker/task:1 CPU:0
//     x0 ─► CollectiveReduce                           x1 ─► CollectiveReduce
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/client_session.h"
#include "client/ops/array_ops.h"
#include "client/ops/collective_ops.h"
#include "core/platform/blocking.h"
#include "core/platform/free_port.h"
#include "core/platform/status.h"
#include "distributed/cluster_spec.h"
#include "distributed/rpc/grpc_remote_worker.h"
#include "distributed/server.h"
#include "distributed/server_testutil.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

constexpr char kWorker0[] = "/job:worker/replica:0/task:0";
constexpr char kWorker1[] = "/job:worker/replica:0/task:1";

// A two-task cluster; `started` says which tasks get a running Server.
class TwoTasks {
 public:
  explicit TwoTasks(std::vector<bool> started = {true, true}, int cpus = 1) : cpus_(cpus) {
    servers_.resize(2);
    // Fresh addresses when a port was taken before its server bound it.
    EXPECT_OK(WithFreeLoopbackAddresses(2, [&](const std::vector<std::string>& addresses) {
      addresses_ = addresses;
      TG_ASSIGN_OR_RETURN(cluster_, ClusterSpec::FromFlag(absl::StrCat("worker=", addresses_[0],
                                                                       ",", addresses_[1])));
      for (int i = 0; i < 2; ++i) {
        absl::Status s = started[i] ? TryStart(i) : absl::OkStatus();
        if (!s.ok()) {
          StopAll();
          return s;
        }
      }
      return absl::OkStatus();
    }));
    addresses_.resize(2);  // empty where none was found: the cluster then fails clearly
  }
  // Starts (or restarts, as a fresh process would) task i's Server.
  void Start(int i) { EXPECT_OK(TryStart(i)); }
  ~TwoTasks() { StopAll(); }
  Server* server(int i) { return servers_[i].get(); }
  const std::string& address(int i) const { return addresses_[i]; }

 private:
  absl::Status TryStart(int i) {
    if (servers_[i] != nullptr) servers_[i]->Stop();
    servers_[i].reset();
    ConfigProto config;
    (*config.mutable_device_count())["CPU"] = cpus_;
    TG_ASSIGN_OR_RETURN(servers_[i], TryStartServer(cluster_, "worker", i, config));
    return absl::OkStatus();
  }
  void StopAll() {
    for (auto& s : servers_) {
      if (s != nullptr) s->Stop();
      s.reset();
    }
  }

  const int cpus_;
  ClusterSpec cluster_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<Server>> servers_;
};

// Task `task`'s graph: its input reduced with the other task's.
struct MemberGraph {
  MemberGraph(int task, const Tensor& input, const std::string& final_op, float timeout = 20)
      : root(Scope::NewRootScope()) {
    Scope s = root.WithDevice(absl::StrCat(task == 0 ? kWorker0 : kWorker1, "/device:CPU:0"));
    reduced = ops::CollectiveReduce(s, ops::Const(s, input), 2, /*group_key=*/1,
                                    /*instance_key=*/1, "Add", final_op, timeout);
  }
  Scope root;
  Output reduced;
};

Tensor RandomVector(int64_t n, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  Tensor t(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// Runs both members `steps` times, each task's session from its own thread.
void RunBoth(TwoTasks& tasks, MemberGraph* graphs, int steps, Tensor* out, absl::Status* status) {
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      ClientSession session(graphs[i].root, tasks.server(i)->target());
      std::vector<Tensor> got;
      for (int step = 0; step < steps && status[i].ok(); ++step) {
        status[i] = session.Run({graphs[i].reduced}, &got);
      }
      if (status[i].ok()) out[i] = got[0];
    });
  }
  for (auto& t : threads) t.join();
}

// Runs each task's `fetches` through its own session, from its own thread,
// `steps` times; `all` gets the last step's outputs, task 0's first.
void RunFetches(TwoTasks& tasks, Scope* roots, std::vector<Output>* fetches, int steps,
                std::vector<Tensor>* all) {
  std::vector<Tensor> out[2];
  absl::Status status[2];
  std::vector<std::thread> threads;
  for (int task = 0; task < 2; ++task) {
    threads.emplace_back([&, task] {
      ClientSession session(roots[task], tasks.server(task)->target());
      for (int step = 0; step < steps && status[task].ok(); ++step) {
        status[task] = session.Run(fetches[task], &out[task]);
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_OK(status[0]);
  ASSERT_OK(status[1]);
  *all = out[0];
  all->insert(all->end(), out[1].begin(), out[1].end());
}

TEST(CollectiveGrpcTest, TwoTasksAllReduceBitIdenticalOverGrpc) {
  setenv("TG_COLLECTIVE_CHUNK_BYTES", "4096", 1);  // about a hundred chunks each way
  TwoTasks tasks;
  unsetenv("TG_COLLECTIVE_CHUNK_BYTES");
  ASSERT_NE(tasks.server(0), nullptr);
  ASSERT_NE(tasks.server(1), nullptr);
  // 400 KB: the ring; 4 KB: one round (WorkerCollectiveExecutor::kDefaultOneRoundBytes).
  for (const int64_t size : {100003, 1001})
    for (const std::string final_op : {"Id", "Div"}) {
      const Tensor x0 = RandomVector(size, 1), x1 = RandomVector(size, 2);
      MemberGraph graphs[2] = {MemberGraph(0, x0, final_op), MemberGraph(1, x1, final_op)};
      std::vector<Tensor> out(2);
      absl::Status status[2];
      RunBoth(tasks, graphs, /*steps=*/3, out.data(), status);
      ASSERT_OK(status[0]);
      ASSERT_OK(status[1]);
      ASSERT_EQ(out[0].NumElements(), size);
      EXPECT_EQ(std::memcmp(out[0].raw_data(), out[1].raw_data(), out[0].TotalBytes()), 0);
      for (int64_t j = 0; j < size; j += 997) {
        const float sum = x0.data<float>()[j] + x1.data<float>()[j];
        EXPECT_FLOAT_EQ(out[0].data<float>()[j], final_op == "Id" ? sum : sum / 2) << j;
      }
    }
}

TEST(CollectiveGrpcTest, LargeChunksTravelByBulkTicketBitIdentical) {
  TwoTasks tasks;
  ASSERT_NE(tasks.server(0), nullptr);
  ASSERT_NE(tasks.server(1), nullptr);
  ASSERT_NE(tasks.server(0)->bulk_port(), 0);
  // 8 MiB: chunks of the default 2 MiB, each fetched from the bulk port
  // straight into its place in the output.
  const int64_t size = int64_t{2} << 20;
  const Tensor x0 = RandomVector(size, 3), x1 = RandomVector(size, 4);
  MemberGraph graphs[2] = {MemberGraph(0, x0, "Id"), MemberGraph(1, x1, "Id")};
  std::vector<Tensor> out(2);
  absl::Status status[2];
  RunBoth(tasks, graphs, /*steps=*/2, out.data(), status);
  ASSERT_OK(status[0]);
  ASSERT_OK(status[1]);
  EXPECT_GT(tasks.server(0)->bulk_fetches(), 0);
  EXPECT_GT(tasks.server(1)->bulk_fetches(), 0);
  ASSERT_EQ(out[0].NumElements(), size);
  EXPECT_EQ(std::memcmp(out[0].raw_data(), out[1].raw_data(), out[0].TotalBytes()), 0);
  for (int64_t j = 0; j < size; j += 9973) {
    EXPECT_FLOAT_EQ(out[0].data<float>()[j], x0.data<float>()[j] + x1.data<float>()[j]) << j;
  }
}

// Three members, two on task 0 and one on task 1: the ring mixes the local
// table and RecvBuf. Max-reduce, gather and a broadcast from task 1.
TEST(CollectiveGrpcTest, MembersOnBothSidesOfTheWireReduceGatherAndBroadcast) {
  TwoTasks tasks({true, true}, /*cpus=*/2);
  ASSERT_NE(tasks.server(0), nullptr);
  ASSERT_NE(tasks.server(1), nullptr);
  const std::vector<std::string> devices = {absl::StrCat(kWorker0, "/device:CPU:0"),
                                            absl::StrCat(kWorker0, "/device:CPU:1"),
                                            absl::StrCat(kWorker1, "/device:CPU:0")};
  Scope roots[2] = {Scope::NewRootScope(), Scope::NewRootScope()};
  std::vector<Output> fetches[2];
  const TensorShape shape({2});
  for (int m = 0; m < 3; ++m) {
    const int task = m < 2 ? 0 : 1;
    Scope s = roots[task].WithDevice(devices[m]);
    const float b = static_cast<float>(m);
    auto x = ops::Const(s, {b, 10 - b}, shape);
    fetches[task].push_back(ops::CollectiveReduce(s, x, 3, 4, 1, "Max", "Id", 20));
    fetches[task].push_back(ops::CollectiveGather(s, x, 3, 4, 2, shape, 20));
    fetches[task].push_back(m == 2 ? ops::CollectiveBcastSend(s, x, 3, 4, 3, shape, 20)
                                   : ops::CollectiveBcastRecv(s, DT_FLOAT, 3, 4, 3, shape, 20));
  }
  std::vector<Tensor> all;
  ASSERT_NO_FATAL_FAILURE(RunFetches(tasks, roots, fetches, /*steps=*/3, &all));
  ASSERT_EQ(all.size(), 9u);
  for (int m = 0; m < 3; ++m) {
    ExpectTensorEqual<float>(all[3 * m], {2, 10}, shape);
    ExpectTensorEqual<float>(all[3 * m + 1], {0, 10, 1, 9, 2, 8}, TensorShape({6}));
    ExpectTensorEqual<float>(all[3 * m + 2], {2, 8}, shape);
  }
}

// Four members, two per task: a small all-reduce runs by recursive doubling,
// its first round between the members of one task (the table), its second
// across the wire (RecvBuf into the output). Mean of random floats: every
// member bit-identical, as the ring's would be.
TEST(CollectiveGrpcTest, FourMembersOnTwoTasksDoublingBitIdentical) {
  TwoTasks tasks({true, true}, /*cpus=*/2);
  ASSERT_NE(tasks.server(0), nullptr);
  ASSERT_NE(tasks.server(1), nullptr);
  constexpr int64_t kSize = 1001;
  std::vector<Tensor> inputs;
  for (int m = 0; m < 4; ++m) inputs.push_back(RandomVector(kSize, 10 + m));
  Scope roots[2] = {Scope::NewRootScope(), Scope::NewRootScope()};
  std::vector<Output> fetches[2];
  for (int m = 0; m < 4; ++m) {
    const int task = m / 2;
    Scope s = roots[task].WithDevice(
        absl::StrCat(task == 0 ? kWorker0 : kWorker1, "/device:CPU:", m % 2));
    fetches[task].push_back(
        ops::CollectiveReduce(s, ops::Const(s, inputs[m]), 4, 9, 1, "Add", "Div", 20));
  }
  std::vector<Tensor> all;
  ASSERT_NO_FATAL_FAILURE(RunFetches(tasks, roots, fetches, /*steps=*/3, &all));
  ASSERT_EQ(all.size(), 4u);
  for (int m = 1; m < 4; ++m) {
    EXPECT_EQ(std::memcmp(all[0].raw_data(), all[m].raw_data(), all[0].TotalBytes()), 0) << m;
  }
  for (int64_t j = 0; j < kSize; ++j) {
    float sum = 0;
    for (int m = 0; m < 4; ++m) sum += inputs[m].data<float>()[j];
    EXPECT_NEAR(all[0].data<float>()[j], sum / 4, 1e-6) << j;
  }
}

// Task 1 restarts (a fresh Worker counts its runs from 0 again, while task 0
// continues): after at most two failed steps the members ask the leader
// again and continue in step.
TEST(CollectiveGrpcTest, ARestartedTaskRejoinsAfterFailedSteps) {
  TwoTasks tasks;
  ASSERT_NE(tasks.server(1), nullptr);
  const Tensor x0 = RandomVector(1000, 1), x1 = RandomVector(1000, 2);
  MemberGraph graphs[2] = {MemberGraph(0, x0, "Id", /*timeout=*/1),
                           MemberGraph(1, x1, "Id", /*timeout=*/1)};
  Tensor out[2];
  absl::Status status[2];
  RunBoth(tasks, graphs, /*steps=*/3, out, status);
  ASSERT_OK(status[0]);
  ASSERT_OK(status[1]);
  tasks.Start(1);
  ASSERT_NE(tasks.server(1), nullptr);
  bool ok = false;
  for (int attempt = 0; attempt < 4 && !ok; ++attempt) {
    status[0] = status[1] = absl::OkStatus();
    RunBoth(tasks, graphs, /*steps=*/1, out, status);
    ok = status[0].ok() && status[1].ok();
  }
  ASSERT_TRUE(ok) << status[0] << "; " << status[1];
  EXPECT_EQ(std::memcmp(out[0].raw_data(), out[1].raw_data(), out[0].TotalBytes()), 0);
  EXPECT_FLOAT_EQ(out[0].data<float>()[7], x0.data<float>()[7] + x1.data<float>()[7]);
}

TEST(CollectiveGrpcTest, MissingTaskIsDeadlineExceededNamingIt) {
  TwoTasks tasks({true, false});  // task 1 never starts
  ASSERT_NE(tasks.server(0), nullptr);
  MemberGraph graph(0, RandomVector(10, 1), "Id", /*timeout=*/1);
  SessionOptions options;
  options.target = tasks.server(0)->target();
  options.config.add_device_filters(kWorker0);  // the session needs task 0 only
  ClientSession session(graph.root, options);
  std::vector<Tensor> out;
  EXPECT_STATUS(session.Run({graph.reduced}, &out), kDeadlineExceeded,
                absl::StrCat("1 of 2 members joined within 1s: ", kWorker0,
                             "/device:CPU:0; never joined: ", kWorker1));
}

TEST(CollectiveGrpcTest, UnreachableLeaderIsUnavailableNamingIt) {
  TwoTasks tasks({false, true});  // the leader, worker 0, never starts
  ASSERT_NE(tasks.server(1), nullptr);
  MemberGraph graph(1, RandomVector(10, 1), "Id", /*timeout=*/2);
  SessionOptions options;
  options.target = tasks.server(1)->target();
  options.config.add_device_filters(kWorker1);
  ClientSession session(graph.root, options);
  std::vector<Tensor> out;
  absl::Status s = session.Run({graph.reduced}, &out);
  EXPECT_TRUE(absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s)) << s;
  EXPECT_NE(std::string(s.message()).find(absl::StrCat("at its leader ", kWorker0)),
            std::string::npos)
      << s;
}

// Tasks start in any order: a member whose group leader (worker 0) is not
// up yet asks it again until the collective's deadline, and the collective
// completes once the leader has come.
TEST(CollectiveGrpcTest, ALeaderThatStartsAfterAMemberIsWaitedFor) {
  TwoTasks tasks({false, true});
  ASSERT_NE(tasks.server(1), nullptr);
  const Tensor x0 = RandomVector(100, 1), x1 = RandomVector(100, 2);
  MemberGraph graphs[2] = {MemberGraph(0, x0, "Id"), MemberGraph(1, x1, "Id")};  // 20 s
  absl::Status status[2];
  std::vector<Tensor> out[2];
  std::thread member([&] {
    SessionOptions options;
    options.target = tasks.server(1)->target();
    options.config.add_device_filters(kWorker1);  // its session needs task 1 only
    ClientSession session(graphs[1].root, options);
    status[1] = session.Run({graphs[1].reduced}, &out[1]);
  });
  absl::SleepFor(absl::Milliseconds(500));  // the member asks the missing leader meanwhile
  tasks.Start(0);
  ASSERT_NE(tasks.server(0), nullptr);
  ClientSession leader(graphs[0].root, tasks.server(0)->target());
  status[0] = leader.Run({graphs[0].reduced}, &out[0]);
  member.join();
  ASSERT_OK(status[0]);
  ASSERT_OK(status[1]);
  EXPECT_EQ(std::memcmp(out[0][0].raw_data(), out[1][0].raw_data(), out[0][0].TotalBytes()), 0);
  EXPECT_FLOAT_EQ(out[0][0].data<float>()[7], x0.data<float>()[7] + x1.data<float>()[7]);
}

TEST(CollectiveGrpcTest, RecvBufOfNoKeyIsInvalidArgumentAndAnUnknownKeyTimesOut) {
  TwoTasks tasks({true, false});
  ASSERT_NE(tasks.server(0), nullptr);
  GrpcRemoteWorker remote(tasks.address(0));
  Tensor t;
  EXPECT_STATUS(WaitForCallback([&](StatusCallback done) {
                  remote.RecvBufAsync("", absl::Now() + absl::Seconds(5), &t, std::move(done));
                }),
                kInvalidArgument, "RecvBuf");
  EXPECT_STATUS(WaitForCallback([&](StatusCallback done) {
                  remote.RecvBufAsync("9:9:0:0:0:0->1", absl::Now() + absl::Milliseconds(300), &t,
                                      std::move(done));
                }),
                kDeadlineExceeded, "9:9:0:0:0:0->1");
}

}  // namespace
}  // namespace tensorgrid
