#include "distributed/slurm_cluster_resolver.h"

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

using Hosts = std::vector<std::string>;

// ---- hostlists ----------------------------------------------------------------

TEST(HostlistTest, PlainNamesAndOneRange) {
  EXPECT_EQ(*slurm::ExpandHostlist("n1"), Hosts({"n1"}));
  EXPECT_EQ(*slurm::ExpandHostlist("n[1-3,7]"), Hosts({"n1", "n2", "n3", "n7"}));
  EXPECT_EQ(*slurm::ExpandHostlist("a,b,c"), Hosts({"a", "b", "c"}));
}

TEST(HostlistTest, KeepsZeroPaddingAndSlurmsOrder) {
  Hosts want = {"a1"};
  for (const char* n : {"01", "02", "03", "04", "05", "06", "07", "08", "09", "10"}) {
    want.push_back(std::string("b") + n);
  }
  EXPECT_EQ(*slurm::ExpandHostlist("a1,b[01-10]"), want);
  // Numeric order, never string order: n2 before n10; and the given order.
  EXPECT_EQ(*slurm::ExpandHostlist("n[9-11]"), Hosts({"n9", "n10", "n11"}));
  EXPECT_EQ(*slurm::ExpandHostlist("z1,a1,n[10,2]"), Hosts({"z1", "a1", "n10", "n2"}));
  EXPECT_EQ(*slurm::ExpandHostlist("n[098-101]"), Hosts({"n098", "n099", "n100", "n101"}));
}

TEST(HostlistTest, SeveralBracketGroupsMultiplyOut) {
  EXPECT_EQ(*slurm::ExpandHostlist("r[1-2]-n[1-2]"), Hosts({"r1-n1", "r1-n2", "r2-n1", "r2-n2"}));
  EXPECT_EQ(*slurm::ExpandHostlist("x,r[1,3]n[5-6].ib,y[2]"),
            Hosts({"x", "r1n5.ib", "r1n6.ib", "r3n5.ib", "r3n6.ib", "y2"}));
}

TEST(HostlistTest, Errors) {
  EXPECT_STATUS(slurm::ExpandHostlist("n[1-3").status(), kInvalidArgument, "'[' without ']'");
  EXPECT_STATUS(slurm::ExpandHostlist("n1-3]").status(), kInvalidArgument, "']' without '['");
  EXPECT_STATUS(slurm::ExpandHostlist("n[1-[2]]").status(), kInvalidArgument, "nested");
  EXPECT_STATUS(slurm::ExpandHostlist("n[3-1]").status(), kInvalidArgument, "runs backwards");
  EXPECT_STATUS(slurm::ExpandHostlist("n[a-b]").status(), kInvalidArgument, "'a-b'");
  EXPECT_STATUS(slurm::ExpandHostlist("n[]").status(), kInvalidArgument, "not N or N-M");
  EXPECT_STATUS(slurm::ExpandHostlist("n[1,,2]").status(), kInvalidArgument, "not N or N-M");
  EXPECT_STATUS(slurm::ExpandHostlist("a,,b").status(), kInvalidArgument, "empty name");
  EXPECT_STATUS(slurm::ExpandHostlist("").status(), kInvalidArgument, "empty name");
  EXPECT_STATUS(slurm::ExpandHostlist("n[0-999999]x[0-9]").status(), kInvalidArgument,
                "over 1000000 hosts");
}

TEST(TasksPerNodeTest, Expands) {
  EXPECT_EQ(*slurm::ExpandTasksPerNode("2(x3),1"), std::vector<int>({2, 2, 2, 1}));
  EXPECT_EQ(*slurm::ExpandTasksPerNode("4"), std::vector<int>({4}));
  EXPECT_EQ(*slurm::ExpandTasksPerNode("1,3(x2)"), std::vector<int>({1, 3, 3}));
  EXPECT_STATUS(slurm::ExpandTasksPerNode("2(x)").status(), kInvalidArgument, "'2(x)'");
  EXPECT_STATUS(slurm::ExpandTasksPerNode("2x3").status(), kInvalidArgument, "'2x3'");
  EXPECT_STATUS(slurm::ExpandTasksPerNode("0").status(), kInvalidArgument, "positive");
  EXPECT_STATUS(slurm::ExpandTasksPerNode("").status(), kInvalidArgument, "positive");
}

// ---- the resolver ----------------------------------------------------------------

// Rank `rank` of a block-distributed step of 5 tasks on n[1-2] (3 + 2).
std::map<std::string, std::string> Step(int rank, const std::string& node, int local) {
  return {{"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_LOCALID", std::to_string(local)},
          {"SLURMD_NODENAME", node},
          {"SLURM_STEP_NODELIST", "n[1-2]"},
          {"SLURM_STEP_TASKS_PER_NODE", "3,2"},
          {"SLURM_STEP_NUM_TASKS", "5"}};
}

absl::StatusOr<ResolvedTask> Resolve(const std::map<std::string, std::string>& env,
                                     const std::string& jobs = "ps:1,worker:4") {
  ClusterResolverOptions options;
  options.slurm_jobs = jobs;
  return SlurmClusterResolver(options, Environment::FromMap(env)).Resolve();
}

TEST(SlurmClusterResolverTest, BlockDistributionRanksInOrder) {
  absl::StatusOr<ResolvedTask> task = Resolve(Step(3, "n2", 0));
  ASSERT_OK(task.status());
  EXPECT_EQ(task->config.cluster.ToString(), "ps=n1:2222;worker=n1:2223,n1:2224,n2:2222,n2:2223");
  EXPECT_EQ(task->config.task, (TaskId{"worker", 2}));
  EXPECT_EQ(task->resolver, "slurm");
  EXPECT_NE(task->ToString().find("this task is /job:worker/replica:0/task:2 at n2:2222"),
            std::string::npos)
      << task->ToString();
  absl::StatusOr<ResolvedTask> ps = Resolve(Step(0, "n1", 0));
  ASSERT_OK(ps.status());
  EXPECT_EQ(ps->config.task, (TaskId{"ps", 0}));
}

TEST(SlurmClusterResolverTest, NodesStayInSlurmsOrder) {
  auto env = Step(1, "n10", 0);
  env["SLURM_STEP_NODELIST"] = "n[2,10]";
  env["SLURM_STEP_TASKS_PER_NODE"] = "1(x2)";
  env["SLURM_STEP_NUM_TASKS"] = "2";
  absl::StatusOr<ResolvedTask> task = Resolve(env, "");
  ASSERT_OK(task.status());
  EXPECT_EQ(task->config.cluster.ToString(), "worker=n2:2222,n10:2222");
  EXPECT_EQ(task->config.task, (TaskId{"worker", 1}));
}

TEST(SlurmClusterResolverTest, PortBaseAndGpusPerTask) {
  ClusterResolverOptions options;
  options.port_base = 3000;
  options.gpus_per_task = 2;
  absl::StatusOr<ResolvedTask> task =
      SlurmClusterResolver(options, Environment::FromMap(Step(2, "n1", 2))).Resolve();
  ASSERT_OK(task.status());
  EXPECT_EQ(*task->config.cluster.TaskAddress("worker", 2), "n1:3002");
  EXPECT_EQ(task->cuda_visible_devices, "4,5");
  EXPECT_EQ(Resolve(Step(2, "n1", 2))->cuda_visible_devices, "");  // none requested
}

TEST(SlurmClusterResolverTest, SelfEntryCheckCatchesCyclicDistribution) {
  // srun --distribution=cyclic puts rank 1 on n2 as its first task.
  EXPECT_STATUS(Resolve(Step(1, "n2", 0)).status(), kFailedPrecondition,
                "puts it on n1 as local task 1 (n1:2223)");
  EXPECT_STATUS(Resolve(Step(1, "n1", 0)).status(), kFailedPrecondition, "--distribution=block");
}

TEST(SlurmClusterResolverTest, ErrorsNameTheVariable) {
  auto env = Step(0, "n1", 0);
  env.erase("SLURM_STEP_NODELIST");
  EXPECT_STATUS(Resolve(env).status(), kInvalidArgument, "SLURM_STEP_NODELIST is not set");
  env = Step(0, "n1", 0);
  env["SLURM_PROCID"] = "x";
  EXPECT_STATUS(Resolve(env).status(), kInvalidArgument, "SLURM_PROCID='x'");
  env = Step(0, "n1", 0);
  env["SLURM_STEP_NODELIST"] = "n[1-2";
  EXPECT_STATUS(Resolve(env).status(), kInvalidArgument, "SLURM_STEP_NODELIST: hostlist 'n[1-2'");
  env = Step(0, "n1", 0);
  env["SLURM_STEP_TASKS_PER_NODE"] = "3";
  EXPECT_STATUS(Resolve(env).status(), kInvalidArgument, "2 node(s) but 1 task count(s)");
  env = Step(0, "n1", 0);
  env["SLURM_STEP_NUM_TASKS"] = "6";
  EXPECT_STATUS(Resolve(env).status(), kInvalidArgument, "SLURM_STEP_NUM_TASKS=6");
  env = Step(0, "n1", 0);
  env.erase("SLURMD_NODENAME");
  EXPECT_STATUS(Resolve(env).status(), kInvalidArgument, "SLURMD_NODENAME is not set");
  EXPECT_STATUS(Resolve(Step(0, "n1", 0), "ps:1,worker:3").status(), kInvalidArgument,
                "--slurm_jobs='ps:1,worker:3' names 4 task(s) but there are 5");
  EXPECT_STATUS(Resolve(Step(0, "n1", 0), "ps:1,worker").status(), kInvalidArgument,
                "'worker' is not JOB:COUNT");
  EXPECT_STATUS(Resolve(Step(0, "n1", 0), "ps:1,ps:4").status(), kInvalidArgument,
                "names job 'ps' twice");
  ClusterResolverOptions options;
  options.port_base = 65534;
  EXPECT_STATUS(
      SlurmClusterResolver(options, Environment::FromMap(Step(0, "n1", 0))).Resolve().status(),
      kInvalidArgument, "--port_base=65534 plus local task 2");
}

}  // namespace
}  // namespace tensorgrid
