// Three tasks, each a Worker behind its own GrpcWorkerService on a loopback
// port; workers pull each other's tensors with RecvTensor over gRPC, and a
// Master drives them all through GrpcRemoteWorkers. The seed example:
//
//   /job:ps/task:0          /job:worker/task:0        /job:worker/task:1
//   x, y (variables) ══x,y══► z1b = x·y + x ══z1b══► z2b = z1b·x + x
//                    ══════════════════ x ═════════►
//
//   Master ──► GrpcRemoteWorker ══ 127.0.0.1:<port> ══► GrpcWorkerService ──► Worker
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/runtime/master.h"
#include "core/runtime/worker.h"
#include "distributed/rpc/grpc_remote_worker.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/rpc/grpc_front_door.h"
#include "distributed/rpc/grpc_worker_service.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

constexpr char kPs[] = "/job:ps/replica:0/task:0";
constexpr char kWorker0[] = "/job:worker/replica:0/task:0";
constexpr char kWorker1[] = "/job:worker/replica:0/task:1";

// One task: its Worker served on a free loopback port, as Server serves it.
struct Task {
  explicit Task(const std::string& name)
      : worker(name, ConfigProto()), door(GrpcFrontDoor::Options()), service(&worker, &door) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    door.RegisterOn(&builder);
    server = builder.BuildAndStart();
    address = "127.0.0.1:" + std::to_string(port);
  }
  ~Task() { server->Shutdown(); }

  Worker worker;
  GrpcFrontDoor door;
  GrpcWorkerService service;
  std::unique_ptr<grpc::Server> server;
  std::string address;
};

class GrpcClusterTest : public ::testing::Test {
 protected:
  GrpcClusterTest() {
    for (const char* name : {kPs, kWorker0, kWorker1}) tasks_[name] = std::make_unique<Task>(name);
    // Every task (and the master) reaches every task over gRPC only.
    for (auto& [name, task] : tasks_) {
      remotes_[name] = std::make_unique<GrpcRemoteWorker>(task->address);
      map_[name] = remotes_[name].get();
    }
    for (auto& [name, task] : tasks_) {
      task->worker.SetWorkerLookup([this](const std::string& t) -> WorkerInterface* {
        auto it = map_.find(t);
        return it == map_.end() ? nullptr : it->second;
      });
    }
  }
  ~GrpcClusterTest() override {
    for (auto& [name, task] : tasks_) task->server->Shutdown();
  }

  static GraphDef SeedGraph() {
    std::ifstream in("tests/testdata/seed_placement.pbtxt");
    std::stringstream text;
    text << in.rdbuf();
    GraphDef g;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text.str(), &g));
    return g;
  }

  std::map<std::string, std::unique_ptr<Task>> tasks_;
  std::map<std::string, std::unique_ptr<GrpcRemoteWorker>> remotes_;
  Master::WorkerMap map_;
};

TEST_F(GrpcClusterTest, SeedExampleRunsAcrossThreeServers) {
  Master master(ConfigProto(), map_, kWorker0);
  ASSERT_OK(master.Create(SeedGraph()));
  std::vector<Tensor> out;
  ASSERT_OK(master.Run(RunOptions(), {}, {}, {"x/Assign", "y/Assign"}, &out, nullptr));
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  for (int step = 0; step < 5; ++step) {
    ASSERT_OK(master.Run(options, {}, {"z2b"}, {}, &out, &metadata));
    // x = y = ones: z1b = x·y + x = 3s; z2b = z1b·x + x = 7s.
    ExpectTensorEqual<float>(out[0], {7, 7, 7, 7}, TensorShape({2, 2}));
  }
  std::set<std::string> tasks;
  for (const GraphDef& p : metadata.partition_graphs()) {
    for (const NodeDef& n : p.node()) {
      tasks.insert(n.device().substr(0, n.device().find("/device:")));
    }
  }
  // Unequal x and y, so that a tensor transposed or reordered between tasks
  // shows: x = [[1, 2], [3, 4]], y = [[5, 6], [7, 8]]; z1b = x·y + x =
  // [[20, 24], [46, 54]]; z2b = z1b·x + x = [[93, 138], [211, 312]].
  ASSERT_OK(master.Run(RunOptions(),
                       {{"x/initial_value", Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})},
                        {"y/initial_value", Tensor::FromVector<float>({5, 6, 7, 8}, {2, 2})}},
                       {}, {"x/Assign", "y/Assign"}, &out, nullptr));
  ASSERT_OK(master.Run(RunOptions(), {}, {"z2b"}, {}, &out, nullptr));
  ExpectTensorEqual<float>(out[0], {93, 138, 211, 312}, TensorShape({2, 2}));
  EXPECT_EQ(tasks, (std::set<std::string>{kPs, kWorker0, kWorker1}));
  EXPECT_OK(master.Close());
}

TEST_F(GrpcClusterTest, FailureOnThePsIsTheRootCauseNotAnEcho) {
  Master master(ConfigProto(), map_, kWorker0);
  ASSERT_OK(master.Create(SeedGraph()));
  std::vector<Tensor> out;
  for (int step = 0; step < 3; ++step) {
    // Nothing initialized: reading x or y on the ps fails; the workers'
    // RecvTensors echo it over the wire, marked as derived.
    absl::Status s = master.Run(RunOptions(), {}, {"z2b"}, {}, &out, nullptr);
    EXPECT_STATUS(s, kFailedPrecondition, "attempting to use uninitialized variable");
    EXPECT_EQ(s.message().find("RecvTensor"), std::string::npos) << s;
  }
  // The cluster still serves once the variables are initialized.
  ASSERT_OK(master.Run(RunOptions(), {}, {}, {"x/Assign", "y/Assign"}, &out, nullptr));
  ASSERT_OK(master.Run(RunOptions(), {}, {"z2b"}, {}, &out, nullptr));
  ExpectTensorEqual<float>(out[0], {7, 7, 7, 7}, TensorShape({2, 2}));
}

TEST_F(GrpcClusterTest, RecvTensorOfAKeyNobodySendsEndsAtTheClientDeadline) {
  GrpcRemoteWorker::Options options;
  options.step_rpc_timeout = absl::Seconds(1);  // RecvTensor waits for a step
  GrpcRemoteWorker ps(tasks_[kPs]->address, options);
  const std::string key =
      "/job:ps/replica:0/task:0/device:CPU:0;1;/job:worker/replica:0/task:0/device:CPU:0;never;0:0";
  Tensor tensor;
  absl::Notification done;
  absl::Status status;
  ps.RecvTensorAsync(12345, key, &tensor, [&](absl::Status s) {
    status = std::move(s);
    done.Notify();
  });
  done.WaitForNotification();
  EXPECT_STATUS(status, kDeadlineExceeded, key);
  EXPECT_NE(status.message().find(tasks_[kPs]->address), std::string::npos) << status;
}

}  // namespace
}  // namespace tensorgrid
