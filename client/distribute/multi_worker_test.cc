// MultiWorkerMirroredStrategy and ParameterServerStrategy over real gRPC
// servers in this process (free ports on 127.0.0.1).
#include "client/distribute/multi_worker_mirrored_strategy.h"
#include "client/distribute/multi_worker_testutil.h"
#include "client/distribute/parameter_server_strategy.h"
#include "client/distribute/strategy_testutil.h"
#include "core/platform/free_port.h"
#include "core/platform/status_testutil.h"
#include "distributed/server.h"

namespace tensorgrid {
namespace distribute {
namespace {

TEST(MultiWorkerMirroredStrategyTest, TwoWorkersStayIdenticalAndMatchOneReplica) {
  OneDeviceStrategy one("/device:CPU:0");
  absl::StatusOr<Trained> ref = Train(one, 4);
  ASSERT_TRUE(ref.ok()) << ref.status();

  MultiWorkerMirroredStrategy::Options options;
  options.mirrored.collective_timeout_seconds = 60;
  std::vector<WorkerRun> runs = TrainWorkers(2, options, 4);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(runs[i].trained.ok()) << "worker " << i << ": " << runs[i].trained.status();
    EXPECT_EQ(runs[i].num_replicas_in_sync, 2);
    EXPECT_EQ(runs[i].is_chief, i == 0);
  }
  const Trained& first = *runs[0].trained;
  const Trained& second = *runs[1].trained;
  // Both workers hold bit-identical variables after every step, equal to one replica's.
  ASSERT_EQ(first.per_step.size(), 8u);
  EXPECT_EQ(first.per_step, second.per_step);
  EXPECT_EQ(first.w[0][0].DebugString(100), second.w[0][0].DebugString(100));
  EXPECT_EQ(first.b.DebugString(100), second.b.DebugString(100));
  ExpectNear(first.w[0][0], ref->w[0][0], 1e-5f);
  ExpectNear(first.b, ref->b, 1e-5f);
  EXPECT_EQ(first.global_step, ref->global_step);
}

// The server's devices are made with the strategy's config (its threads
// per kernel); the strategy adds its devices and group leader.
TEST(MultiWorkerMirroredStrategyTest, TheServerTakesTheConfig) {
  MultiWorkerMirroredStrategy::Options options;
  options.config.set_intra_op_parallelism_threads(1);
  options.config.set_inter_op_parallelism_threads(3);
  std::unique_ptr<MultiWorkerMirroredStrategy> strategy;
  ASSERT_OK(WithFreeLoopbackAddresses(1, [&](const std::vector<std::string>& addresses) {
    options.tf_config = WorkerConfig(addresses, 0);
    TG_ASSIGN_OR_RETURN(strategy, MultiWorkerMirroredStrategy::Create(options));
    return absl::OkStatus();
  }));
  const ConfigProto& config = strategy->server()->config();
  EXPECT_EQ(config.intra_op_parallelism_threads(), 1);
  EXPECT_EQ(config.inter_op_parallelism_threads(), 3);
  EXPECT_EQ(config.device_count().at("CPU"), 1);
  EXPECT_EQ(config.collective_group_leader(), "/job:worker/replica:0/task:0");
}

TEST(MultiWorkerMirroredStrategyTest, MissingWorkerFailsNamingIt) {
  const std::vector<std::string> addresses = FreeLoopbackAddresses(2);
  ASSERT_EQ(addresses.size(), 2u);
  MultiWorkerMirroredStrategy::Options options;
  options.tf_config = WorkerConfig(addresses, 0);
  options.mirrored.collective_timeout_seconds = 2;
  auto strategy = MultiWorkerMirroredStrategy::Create(options);
  ASSERT_TRUE(strategy.ok()) << strategy.status();
  absl::StatusOr<Trained> t = Train(**strategy, 1, false, (*strategy)->target());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kDeadlineExceeded) << t.status();
  EXPECT_NE(t.status().message().find("/job:worker/replica:0/task:1"), std::string::npos)
      << t.status();
}

TEST(MultiWorkerMirroredStrategyTest, BadClusters) {
  MultiWorkerMirroredStrategy::Options options;
  options.tf_config = WorkerConfig({"127.0.0.1:1"}, 0);
  options.tf_config->task = {"ps", 0};
  auto strategy = MultiWorkerMirroredStrategy::Create(options);
  ASSERT_FALSE(strategy.ok());
  EXPECT_NE(strategy.status().message().find("is not a chief or worker task"), std::string::npos)
      << strategy.status();
}

TEST(ParameterServerStrategyTest, TwoWorkersMatchOneReplica) {
  OneDeviceStrategy one("/device:CPU:0");
  absl::StatusOr<Trained> ref = Train(one, 4);
  ASSERT_TRUE(ref.ok()) << ref.status();

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LocalCluster> cluster, LocalCluster::Start(2, 2));
  auto strategy = ParameterServerStrategy::Create(cluster->spec());
  ASSERT_TRUE(strategy.ok()) << strategy.status();
  EXPECT_EQ((*strategy)->num_replicas_in_sync(), 2);
  absl::StatusOr<Trained> t = Train(**strategy, 4, false, (*strategy)->target());
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectNear(t->w[0][0], ref->w[0][0], 1e-5f);
  ExpectNear(t->b, ref->b, 1e-5f);
  EXPECT_EQ(t->global_step, ref->global_step);
}

TEST(ParameterServerStrategyTest, NeedsPsAndWorkers) {
  ClusterSpec::JobMap jobs;
  jobs["worker"] = {"127.0.0.1:1"};
  auto strategy = ParameterServerStrategy::Create(*ClusterSpec::FromMap(jobs));
  ASSERT_FALSE(strategy.ok());
  EXPECT_EQ(strategy.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace distribute
}  // namespace tensorgrid
