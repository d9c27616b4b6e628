// The strategies on a machine with GPUs, on fake GPUs (devices/fake_gpu):
// two per task, with Const and the linear model's arithmetic (MatMul, Add, Sub,
// Square, Mul, AssignAdd) given GPU kernels; the rest of the step has none and runs on
// the task's CPU under soft placement, as a GPU build's ops without GPU
// kernels do. MirroredStrategy and CentralStorageStrategy default to every
// local GPU, MultiWorkerMirroredStrategy's replicas go to each worker's
// GPUs, ParameterServerStrategy's compute to each worker's GPU; collectives
// run between GPUs through host memory. Each trains what the same strategy
// trains on CPUs.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/distribute/multi_worker_mirrored_strategy.h"
#include "client/distribute/multi_worker_testutil.h"
#include "client/distribute/parameter_server_strategy.h"
#include "client/distribute/strategy_testutil.h"
#include "client/ops/collective_ops.h"
#include "core/framework/device_factory.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status_testutil.h"
#include "devices/fake_gpu/fake_gpu_device.h"

namespace tensorgrid {
namespace distribute {
namespace {

class GpuStrategyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    RegisterFakeGpuFactory(2);
    for (const char* op :
         {"Const", "MatMul", "Add", "AddV2", "Sub", "Square", "Mul", "AssignAdd"}) {
      RegisterFakeGpuKernel(op, {});
    }
  }
  void SetUp() override { ResetFakeGpuCopyCounts(); }
};

TEST_F(GpuStrategyTest, LocalDeviceCountCountsWithoutMakingDevices) {
  ConfigProto one;
  (*one.mutable_device_count())[DEVICE_GPU] = 1;
  (*one.mutable_device_count())[DEVICE_CPU] = 3;
  EXPECT_EQ(LocalDeviceCount(DEVICE_GPU, ConfigProto()).value_or(-1), 2);
  EXPECT_EQ(LocalDeviceCount(DEVICE_GPU, one).value_or(-1), 1);
  EXPECT_EQ(LocalDeviceCount(DEVICE_CPU, one).value_or(-1), 3);
  EXPECT_EQ(LocalDeviceCount(DEVICE_CPU, ConfigProto()).value_or(-1), 1);
  EXPECT_EQ(LocalDeviceCount("TPU", ConfigProto()).value_or(-1), 0);
}

TEST_F(GpuStrategyTest, CollectiveReduceBetweenTwoGpusGoesThroughHostMemory) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> sums;
  for (int g = 0; g < 2; ++g) {
    const Scope gpu = root.WithDevice(absl::StrCat("/device:GPU:", g));
    // The input is made on the GPU, so that it must leave it.
    Output x = ops::Mul(gpu, ops::Const(root.WithDevice("/device:CPU:0"), {1.f + g, 10.f}),
                        ops::Const(root.WithDevice("/device:CPU:0"), {1.f, 1.f}));
    sums.push_back(
        ops::CollectiveReduce(gpu.WithOpName(absl::StrCat("sum", g)), x, 2, 1, 1, "Add", "Id", 20));
  }
  GraphDef graph;
  ASSERT_OK(root.ToGraphDef(&graph));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(SessionOptions()));
  ASSERT_OK(session->Create(graph));
  RunOptions options;
  options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  std::vector<Tensor> out;
  ASSERT_OK(session->Run(options, {}, {"sum0", "sum1"}, {}, &out, &metadata));
  EXPECT_EQ(out[0].SummarizeValue(2), "3 20");
  EXPECT_EQ(out[1].SummarizeValue(2), "3 20");
  std::map<std::string, std::string> ran_on;
  for (const auto& dev : metadata.step_stats().dev_stats()) {
    for (const auto& node : dev.node_stats()) ran_on[node.node_name()] = dev.device();
  }
  EXPECT_TRUE(absl::EndsWith(ran_on["sum0"], "/device:GPU:0")) << ran_on["sum0"];
  EXPECT_TRUE(absl::EndsWith(ran_on["sum1"], "/device:GPU:1")) << ran_on["sum1"];
  // Each member's input out of its GPU for the exchange (the fetches come
  // from host memory already).
  EXPECT_EQ(FakeGpuCopyCounts().device_to_host, 2);
}

TEST_F(GpuStrategyTest, MirroredStrategyDefaultsToEveryLocalGpu) {
  MirroredStrategy on_gpus;
  EXPECT_EQ(on_gpus.replica_devices(),
            (std::vector<std::string>{"/device:GPU:0", "/device:GPU:1"}));
  EXPECT_TRUE(on_gpus.session_config().allow_soft_placement());
  ASSERT_OK_AND_ASSIGN(Trained gpus, Train(on_gpus, 4, /*adam=*/false, "", /*stepwise=*/true,
                                           /*trace=*/true));
  MirroredStrategy on_cpus({"/device:CPU:0", "/device:CPU:1"});
  ASSERT_OK_AND_ASSIGN(Trained cpus, Train(on_cpus, 4, false, "", true));
  ASSERT_EQ(gpus.per_step.size(), cpus.per_step.size());
  ExpectNear(gpus.w[0][0], cpus.w[0][0], 1e-6f);
  ExpectNear(gpus.b, cpus.b, 1e-6f);
  // Each replica's arithmetic and its all-reduce on its own GPU.
  const std::set<std::string> both = {"/job:localhost/replica:0/task:0/device:GPU:0",
                                      "/job:localhost/replica:0/task:0/device:GPU:1"};
  EXPECT_EQ(DevicesRanOn(gpus, "MatMul"), both);
  EXPECT_EQ(DevicesRanOn(gpus, "CollectiveReduce"), both);
  EXPECT_GT(FakeGpuCopyCounts().host_to_device, 0);
}

TEST_F(GpuStrategyTest, CentralStorageStrategyComputesOnEveryLocalGpu) {
  CentralStorageStrategy central;
  EXPECT_EQ(central.replica_devices(),
            (std::vector<std::string>{"/device:GPU:0", "/device:GPU:1"}));
  ASSERT_OK_AND_ASSIGN(Trained gpus, Train(central, 2, false, "", false, /*trace=*/true));
  CentralStorageStrategy on_cpus({"/device:CPU:0", "/device:CPU:1"});
  ASSERT_OK_AND_ASSIGN(Trained cpus, Train(on_cpus, 2));
  ExpectNear(gpus.w[0][0], cpus.w[0][0], 1e-6f);
  EXPECT_EQ(DevicesRanOn(gpus, "MatMul").size(), 2u);
}

TEST_F(GpuStrategyTest, MultiWorkerMirroredStrategyTrainsOnEachWorkersGpus) {
  OneDeviceStrategy one("/device:CPU:0");
  ASSERT_OK_AND_ASSIGN(Trained ref, Train(one, 4));
  std::vector<WorkerRun> runs =
      TrainWorkers(2, MultiWorkerMirroredStrategy::Options(), 4, /*trace=*/true);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(runs[i].trained.ok()) << "worker " << i << ": " << runs[i].trained.status();
    const std::string task = absl::StrCat("/job:worker/replica:0/task:", i);
    const std::vector<std::string> gpus = {task + "/device:GPU:0", task + "/device:GPU:1"};
    EXPECT_EQ(runs[i].replica_devices, gpus);
    EXPECT_EQ(DevicesRanOn(*runs[i].trained, "MatMul"),
              std::set<std::string>(gpus.begin(), gpus.end()));
    EXPECT_EQ(DevicesRanOn(*runs[i].trained, "CollectiveReduce"),
              std::set<std::string>(gpus.begin(), gpus.end()));
  }
  EXPECT_EQ(runs[0].trained->per_step, runs[1].trained->per_step);
  ExpectNear(runs[0].trained->w[0][0], ref.w[0][0], 1e-5f);
  ExpectNear(runs[0].trained->b, ref.b, 1e-5f);
}

TEST_F(GpuStrategyTest, MultiWorkerMirroredStrategyRefusesMoreReplicasThanGpus) {
  MultiWorkerMirroredStrategy::Options options;
  options.tf_config = WorkerConfig(FreeLoopbackAddresses(1), 0);
  options.local_devices = 3;
  EXPECT_STATUS(MultiWorkerMirroredStrategy::Create(options).status(), kInvalidArgument,
                "local_devices is 3 but this worker has 2 GPUs");
}

TEST_F(GpuStrategyTest, ParameterServerStrategyComputesOnEachWorkersGpu) {
  OneDeviceStrategy one("/device:CPU:0");
  ASSERT_OK_AND_ASSIGN(Trained ref, Train(one, 4));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LocalCluster> cluster, LocalCluster::Start(1, 2));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ParameterServerStrategy> strategy,
                       ParameterServerStrategy::Create(cluster->spec()));
  ASSERT_OK_AND_ASSIGN(Trained trained,
                       Train(*strategy, 4, false, strategy->target(), false, /*trace=*/true));
  ExpectNear(trained.w[0][0], ref.w[0][0], 1e-5f);
  ExpectNear(trained.b, ref.b, 1e-5f);
  EXPECT_EQ(DevicesRanOn(trained, "MatMul"),
            (std::set<std::string>{"/job:worker/replica:0/task:0/device:GPU:0",
                                   "/job:worker/replica:0/task:1/device:GPU:0"}));
  // The variables, and their updates, stay on the ps's CPU.
  int updates = 0;
  for (const auto& [node, device] : trained.placement) {
    if (absl::StrContains(node, "Apply") && !absl::StartsWith(node, "_")) {
      EXPECT_EQ(device, "/job:ps/replica:0/task:0/device:CPU:0") << node;
      ++updates;
    }
  }
  EXPECT_GT(updates, 0);
}

}  // namespace
}  // namespace distribute
}  // namespace tensorgrid
