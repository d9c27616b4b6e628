#include "distributed/cluster_resolver.h"

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

using Env = std::map<std::string, std::string>;

const char kTfConfig[] =
    R"({"cluster": {"ps": ["localhost:2222"], "worker": ["localhost:2223"]},
        "task": {"type": "ps", "index": 0}})";

Env SlurmEnv() {
  return {{"SLURM_PROCID", "0"},
          {"SLURM_LOCALID", "0"},
          {"SLURMD_NODENAME", "n1"},
          {"SLURM_STEP_NODELIST", "n1"},
          {"SLURM_STEP_TASKS_PER_NODE", "2"}};
}

std::string Chosen(const ClusterResolverOptions& options, const Env& env) {
  absl::StatusOr<std::unique_ptr<ClusterResolver>> r =
      NewClusterResolver(options, Environment::FromMap(env));
  if (!r.ok()) return std::string(r.status().message());
  return (*r)->name();
}

TEST(ClusterResolverTest, AutoOrderFlagsTfConfigSlurmMpi) {
  ClusterResolverOptions flags;
  flags.cluster = "worker=localhost:2222";
  flags.job_name = "worker";
  Env all = SlurmEnv();
  all["TF_CONFIG"] = kTfConfig;
  all["OMPI_COMM_WORLD_RANK"] = "0";
  EXPECT_EQ(Chosen(flags, all), "flags");
  ClusterResolverOptions none;
  EXPECT_EQ(Chosen(none, all), "tf_config");
  all.erase("TF_CONFIG");
  EXPECT_EQ(Chosen(none, all), "slurm");
  all.erase("SLURM_PROCID");
  EXPECT_EQ(Chosen(none, all), "mpi");
  EXPECT_EQ(Chosen(none, {{"PMIX_RANK", "3"}}), "mpi");
  EXPECT_EQ(Chosen(none, {{"TF_CONFIG", ""}}).substr(0, 11), "no cluster:");
  // Under mpirun a --cluster with no --job_name is MPI's host list.
  ClusterResolverOptions hosts;
  hosts.cluster = "h:1,h:2";
  EXPECT_EQ(Chosen(hosts, {{"OMPI_COMM_WORLD_RANK", "0"}}), "mpi");
  EXPECT_EQ(Chosen(hosts, {}), "flags");
}

TEST(ClusterResolverTest, ExplicitChoiceAndMisplacedFlags) {
  ClusterResolverOptions options;
  options.resolver = "slurm";
  EXPECT_EQ(Chosen(options, {}), "slurm");
  options.resolver = "kubernetes";
  EXPECT_EQ(Chosen(options, {}),
            "--cluster_resolver='kubernetes' is not auto, flags, tf_config, slurm or mpi");
  options.resolver = "tf_config";
  options.job_name = "ps";
  EXPECT_EQ(Chosen(options, {}),
            "--job_name and --task_index belong with --cluster_resolver=flags, not tf_config");
  options.resolver = "tf_config";
  options.job_name = "";
  EXPECT_STATUS(ResolveCluster(options, Environment::FromMap({})).status(), kInvalidArgument,
                "cluster resolver tf_config: TF_CONFIG is not set");
}

TEST(ClusterResolverTest, Flags) {
  ClusterResolverOptions options;
  options.ps_hosts = "localhost:2222";
  options.worker_hosts = "localhost:2223,localhost:2224";
  options.job_name = "worker";
  options.task_index = 1;
  absl::StatusOr<ResolvedTask> task = ResolveCluster(options, Environment::FromMap({}));
  ASSERT_OK(task.status());
  EXPECT_EQ(task->config.cluster.ToString(),
            "ps=localhost:2222;worker=localhost:2223,localhost:2224");
  EXPECT_EQ(task->config.task, (TaskId{"worker", 1}));
  EXPECT_EQ(task->ToString(),
            "cluster resolver flags: this task is /job:worker/replica:0/task:1 at localhost:2224; "
            "cluster ps=localhost:2222;worker=localhost:2223,localhost:2224");
  options.task_index = 2;
  EXPECT_STATUS(ResolveCluster(options, Environment::FromMap({})).status(), kInvalidArgument,
                "--task_index 2 is out of range");
  options.cluster = "ps=localhost:2222";
  EXPECT_STATUS(ResolveCluster(options, Environment::FromMap({})).status(), kInvalidArgument,
                "not both");
  options = ClusterResolverOptions();
  options.cluster = "ps=localhost:2222";
  EXPECT_STATUS(ResolveCluster(options, Environment::FromMap({})).status(), kInvalidArgument,
                "--cluster needs --job_name");
  options.job_name = "chief";
  EXPECT_STATUS(ResolveCluster(options, Environment::FromMap({})).status(), kInvalidArgument,
                "--job_name 'chief' is not a job");
  options.cluster = "ps=localhost:70000";
  EXPECT_STATUS(ResolveCluster(options, Environment::FromMap({})).status(), kInvalidArgument,
                "--cluster: ");
}

// TF_CONFIG as Kubeflow's training operator writes it for a TFJob "mnist"
// in namespace "kubeflow".
std::string TfJobConfig(const std::string& chief_job, const std::string& type, int index) {
  return "{\"cluster\": {\"" + chief_job + "\": [\"mnist-" + chief_job +
         "-0.kubeflow.svc:2222\"],"
         " \"ps\": [\"mnist-ps-0.kubeflow.svc:2222\"],"
         " \"worker\": [\"mnist-worker-0.kubeflow.svc:2222\", "
         "\"mnist-worker-1.kubeflow.svc:2222\"]},"
         " \"task\": {\"type\": \"" +
         type + "\", \"index\": " + std::to_string(index) +
         "},"
         " \"environment\": \"cloud\"}";
}

TEST(ClusterResolverTest, KubeflowTfJob) {
  for (const std::string chief : {"chief", "master"}) {
    absl::StatusOr<ResolvedTask> task =
        ResolveCluster(ClusterResolverOptions(),
                       Environment::FromMap({{"TF_CONFIG", TfJobConfig(chief, "worker", 1)}}));
    ASSERT_OK(task.status());
    EXPECT_EQ(task->resolver, "tf_config");
    EXPECT_EQ(*task->config.cluster.TaskAddress("worker", 1), "mnist-worker-1.kubeflow.svc:2222");
    EXPECT_EQ(*task->config.cluster.TaskAddress(chief, 0),
              "mnist-" + chief + "-0.kubeflow.svc:2222");
    EXPECT_FALSE(IsChief(task->config));
    task = ResolveCluster(ClusterResolverOptions(),
                          Environment::FromMap({{"TF_CONFIG", TfJobConfig(chief, chief, 0)}}));
    ASSERT_OK(task.status());
    EXPECT_TRUE(IsChief(task->config)) << chief;
  }
  // A worker 0 beside a master is not the chief.
  absl::StatusOr<TfConfig> worker0 = TfConfig::ParseTfConfig(TfJobConfig("master", "worker", 0));
  ASSERT_OK(worker0.status());
  EXPECT_FALSE(IsChief(*worker0));
  // The evaluator runs beside the cluster.
  absl::StatusOr<TfConfig> evaluator =
      TfConfig::ParseTfConfig(TfJobConfig("chief", "evaluator", 0));
  ASSERT_OK(evaluator.status());
  EXPECT_TRUE(IsChief(*evaluator));
}

TEST(ClusterResolverTest, KubeflowTfJobErrors) {
  EXPECT_STATUS(TfConfig::ParseTfConfig(
                    R"({"cluster": {"chief": ["c:1"], "master": ["m:1"], "worker": ["w:1"]},
                        "task": {"type": "worker"}, "environment": "cloud"})")
                    .status(),
                kInvalidArgument, "has both \"chief\" and \"master\"");
  EXPECT_STATUS(TfConfig::ParseTfConfig(
                    R"({"cluster": {"master": ["m:1", "m:2"]}, "task": {"type": "master"}})")
                    .status(),
                kInvalidArgument, "\"cluster\".\"master\" has 2 tasks");
  EXPECT_STATUS(
      TfConfig::ParseTfConfig(R"({"cluster": {"master": ["m:1"]}, "task": {"type": "chief"}})")
          .status(),
      kInvalidArgument, "\"task\".\"type\" 'chief' is not a job of the cluster");
}

TEST(ClusterResolverTest, ResolvedTaskSetsCudaVisibleDevicesOnce) {
  ResolvedTask task;
  EXPECT_EQ(task.ApplyCudaVisibleDevices(), "");
  unsetenv("CUDA_VISIBLE_DEVICES");
  task.cuda_visible_devices = "2,3";
  EXPECT_EQ(task.ApplyCudaVisibleDevices(), "CUDA_VISIBLE_DEVICES set to 2,3");
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "2,3");
  task.cuda_visible_devices = "4,5";
  EXPECT_EQ(task.ApplyCudaVisibleDevices(),
            "CUDA_VISIBLE_DEVICES is already 2,3; kept (the resolver's is 4,5)");
  unsetenv("CUDA_VISIBLE_DEVICES");
}

TEST(ClusterResolverTest, ProcessEnvironment) {
  setenv("TG_RESOLVER_TEST_VARIABLE", "x", 1);
  EXPECT_EQ(Environment::Process().Get("TG_RESOLVER_TEST_VARIABLE"), "x");
  EXPECT_FALSE(Environment::Process().Get("TG_RESOLVER_TEST_UNSET").has_value());
  unsetenv("TG_RESOLVER_TEST_VARIABLE");
}

}  // namespace
}  // namespace tensorgrid
