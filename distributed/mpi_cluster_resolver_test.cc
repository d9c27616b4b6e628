#include "distributed/mpi_cluster_resolver.h"

#include <cstdio>
#include <fstream>

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

TEST(HostfileTest, Parses) {
  absl::StatusOr<std::vector<mpi::HostSlots>> hosts = mpi::ParseHostfile(
      "hosts", "# the cluster\nn2 slots=2\n\n  n10   max_slots=4  # one slot\nn2 slots=1\n");
  ASSERT_OK(hosts.status());
  EXPECT_EQ(*hosts, (std::vector<mpi::HostSlots>{{"n2", 3}, {"n10", 1}}));
}

TEST(HostfileTest, Errors) {
  EXPECT_STATUS(mpi::ParseHostfile("hosts", "n1 slots=2\nn2 slots=0\n").status(), kInvalidArgument,
                "hosts:2: 'slots=0'");
  EXPECT_STATUS(mpi::ParseHostfile("hosts", "n1 cpus=2\n").status(), kInvalidArgument,
                "hosts:1: 'cpus=2'");
  EXPECT_STATUS(mpi::ParseHostfile("hosts", "# nothing\n\n").status(), kInvalidArgument,
                "hosts names no host");
}

absl::StatusOr<ResolvedTask> Resolve(const ClusterResolverOptions& options,
                                     const std::map<std::string, std::string>& env) {
  return MpiClusterResolver(options, Environment::FromMap(env)).Resolve();
}

TEST(MpiClusterResolverTest, ClusterWithJobsInWrittenOrder) {
  ClusterResolverOptions options;
  options.cluster = "worker=h1:2223,h2:2222;ps=h1:2222";
  absl::StatusOr<ResolvedTask> task =
      Resolve(options, {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "3"}});
  ASSERT_OK(task.status());
  EXPECT_EQ(task->config.task, (TaskId{"ps", 0}));
  EXPECT_EQ(task->resolver, "mpi");
  task = Resolve(options, {{"PMIX_RANK", "1"}});
  ASSERT_OK(task.status());
  EXPECT_EQ(task->config.task, (TaskId{"worker", 1}));
  options.mpi_jobs = "ps:1,worker:2";
  EXPECT_STATUS(Resolve(options, {{"PMIX_RANK", "1"}}).status(), kInvalidArgument,
                "names its jobs already");
}

TEST(MpiClusterResolverTest, AddressListWithJobs) {
  ClusterResolverOptions options;
  options.cluster = "h1:2222,h1:2223,h2:2222";
  options.mpi_jobs = "ps:1,worker:2";
  absl::StatusOr<ResolvedTask> task =
      Resolve(options, {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "3"}});
  ASSERT_OK(task.status());
  EXPECT_EQ(task->config.cluster.ToString(), "ps=h1:2222;worker=h1:2223,h2:2222");
  EXPECT_EQ(task->config.task, (TaskId{"worker", 0}));
  EXPECT_STATUS(
      Resolve(options, {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}}).status(),
      kInvalidArgument, "OMPI_COMM_WORLD_SIZE=4 but --cluster='h1:2222,h1:2223,h2:2222' has 3");
  EXPECT_STATUS(Resolve(options, {{"OMPI_COMM_WORLD_RANK", "3"}}).status(), kInvalidArgument,
                "rank 3 is out of range");
  EXPECT_STATUS(Resolve(options, {{"OMPI_COMM_WORLD_RANK", "-1"}}).status(), kInvalidArgument,
                "OMPI_COMM_WORLD_RANK='-1'");
}

TEST(MpiClusterResolverTest, HostfileFillsSlotsInTurn) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/hosts";
  std::ofstream(path) << "n2 slots=2\nn10 slots=2\n";
  ClusterResolverOptions options;
  options.hostfile = path;
  options.mpi_jobs = "ps:1,worker:2";
  absl::StatusOr<ResolvedTask> task = Resolve(options, {{"OMPI_COMM_WORLD_RANK", "2"},
                                                        {"OMPI_COMM_WORLD_SIZE", "3"},
                                                        {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}});
  ASSERT_OK(task.status());
  EXPECT_EQ(task->config.cluster.ToString(), "ps=n2:2222;worker=n2:2223,n10:2222");
  EXPECT_EQ(task->config.task, (TaskId{"worker", 1}));
  // mpirun --map-by node would put rank 2 on n2 again, as its second rank.
  EXPECT_STATUS(Resolve(options, {{"OMPI_COMM_WORLD_RANK", "2"},
                                  {"OMPI_COMM_WORLD_SIZE", "3"},
                                  {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}})
                    .status(),
                kFailedPrecondition, "puts it at n10:2222 (local rank 0)");
  EXPECT_STATUS(
      Resolve(options, {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "5"}}).status(),
      kInvalidArgument, "OMPI_COMM_WORLD_SIZE=5 but --hostfile=");
  options.hostfile = path + ".missing";
  EXPECT_STATUS(Resolve(options, {{"OMPI_COMM_WORLD_RANK", "0"}}).status(), kNotFound,
                "--hostfile=");
}

TEST(MpiClusterResolverTest, NeedsHostsFromOnePlace) {
  ClusterResolverOptions options;
  EXPECT_STATUS(Resolve(options, {{"OMPI_COMM_WORLD_RANK", "0"}}).status(), kInvalidArgument,
                "give --cluster or --hostfile");
  options.cluster = "h:1";
  options.hostfile = "hosts";
  EXPECT_STATUS(Resolve(options, {{"OMPI_COMM_WORLD_RANK", "0"}}).status(), kInvalidArgument,
                "give --cluster or --hostfile");
  EXPECT_STATUS(Resolve(ClusterResolverOptions(), {}).status(), kInvalidArgument,
                "PMIX_RANK is not set");
}

}  // namespace
}  // namespace tensorgrid
