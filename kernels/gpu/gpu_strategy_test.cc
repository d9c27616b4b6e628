// The distribution strategies on a real GPU (each check against the same
// model trained on the CPU): MirroredStrategy() takes the machine's GPUs,
// two MultiWorkerMirroredStrategy workers (servers in this process, on the
// same GPU) train on their GPU:0 with their all-reduces there, and
// ParameterServerStrategy's workers compute on their GPU. The same paths run
// on fake GPUs in every CI run (client/distribute/gpu_strategy_test.cc);
// this one finds what only CUDA shows. Skips with "no GPU" where CUDA sees
// none.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "client/distribute/multi_worker_mirrored_strategy.h"
#include "client/distribute/multi_worker_testutil.h"
#include "client/distribute/parameter_server_strategy.h"
#include "client/distribute/strategy_testutil.h"
#include "devices/gpu/gpu_device.h"

namespace tensorgrid {
namespace distribute {
namespace {

class GpuStrategyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (VisibleGpuCount() == 0) {
      std::cout << "skipped: no GPU: CUDA sees no device on this machine\n";
      GTEST_SKIP() << "no GPU: CUDA sees no device on this machine";
    }
    OneDeviceStrategy cpu("/device:CPU:0");
    absl::StatusOr<Trained> ref = Train(cpu, 4);
    ASSERT_TRUE(ref.ok()) << ref.status();
    ref_ = *std::move(ref);
  }

  void ExpectMatchesTheCpu(const Trained& t) {
    ExpectNear(t.w[0][0], ref_.w[0][0], 1e-5f);
    ExpectNear(t.b, ref_.b, 1e-5f);
    EXPECT_EQ(t.global_step, ref_.global_step);
  }

  Trained ref_;
};

TEST_F(GpuStrategyTest, MirroredStrategyTakesTheGpus) {
  MirroredStrategy strategy;
  const int gpus = VisibleGpuCount();
  ASSERT_EQ(strategy.replica_devices().size(), static_cast<size_t>(gpus));
  absl::StatusOr<Trained> t = Train(strategy, 4, false, "", false, /*trace=*/true);
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectMatchesTheCpu(*t);
  EXPECT_EQ(DevicesRanOn(*t, "MatMul"),
            std::set<std::string>{"/job:localhost/replica:0/task:0/device:GPU:0"});
}

TEST_F(GpuStrategyTest, TwoMultiWorkerMirroredWorkersTrainOnTheirGpus) {
  MultiWorkerMirroredStrategy::Options options;
  options.local_devices = 1;  // one GPU each, wherever the machine has more
  std::vector<WorkerRun> runs = TrainWorkers(2, options, 4, /*trace=*/true);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(runs[i].trained.ok()) << "worker " << i << ": " << runs[i].trained.status();
    const std::string gpu = absl::StrCat("/job:worker/replica:0/task:", i, "/device:GPU:0");
    EXPECT_EQ(runs[i].replica_devices, std::vector<std::string>{gpu});
    EXPECT_EQ(DevicesRanOn(*runs[i].trained, "MatMul"), std::set<std::string>{gpu});
    EXPECT_EQ(DevicesRanOn(*runs[i].trained, "CollectiveReduce"), std::set<std::string>{gpu});
  }
  EXPECT_EQ(runs[0].trained->per_step, runs[1].trained->per_step);
  ExpectMatchesTheCpu(*runs[0].trained);
}

TEST_F(GpuStrategyTest, ParameterServerWorkersComputeOnTheirGpus) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(1, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto strategy = ParameterServerStrategy::Create((*cluster)->spec());
  ASSERT_TRUE(strategy.ok()) << strategy.status();
  absl::StatusOr<Trained> t =
      Train(**strategy, 4, false, (*strategy)->target(), false, /*trace=*/true);
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectMatchesTheCpu(*t);
  EXPECT_EQ(DevicesRanOn(*t, "MatMul"),
            (std::set<std::string>{"/job:worker/replica:0/task:0/device:GPU:0",
                                   "/job:worker/replica:0/task:1/device:GPU:0"}));
}

}  // namespace
}  // namespace distribute
}  // namespace tensorgrid
