#include "distributed/cluster_spec.h"

#include <cstdlib>

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

ClusterSpecOptions AllowPortZero() {
  ClusterSpecOptions options;
  options.allow_port_zero = true;
  return options;
}

// ---- ClusterSpec::FromMap --------------------------------------------------

TEST(ClusterSpecTest, FromMapKeepsTaskOrder) {
  absl::StatusOr<ClusterSpec> spec = ClusterSpec::FromMap(
      {{"ps", {"localhost:2222"}}, {"worker", {"localhost:2224", "localhost:2223"}}});
  ASSERT_OK(spec.status());
  EXPECT_EQ(spec->jobs(), (std::vector<std::string>{"ps", "worker"}));
  EXPECT_EQ(spec->num_tasks("ps"), 1);
  EXPECT_EQ(spec->num_tasks("worker"), 2);
  EXPECT_EQ(spec->num_tasks("chief"), 0);
  EXPECT_TRUE(spec->HasJob("worker"));
  EXPECT_FALSE(spec->HasJob("chief"));
  EXPECT_EQ(*spec->TaskAddress("worker", 0), "localhost:2224");
  EXPECT_EQ(*spec->TaskAddress("worker", 1), "localhost:2223");
}

TEST(ClusterSpecTest, EmptyClusterIsAnError) {
  EXPECT_STATUS(ClusterSpec::FromMap({}).status(), kInvalidArgument, "no jobs");
  EXPECT_TRUE(ClusterSpec().empty());
}

TEST(ClusterSpecTest, JobNameRules) {
  EXPECT_STATUS(ClusterSpec::FromMap({{"", {"h:1"}}}).status(), kInvalidArgument,
                "job name is empty");
  EXPECT_STATUS(ClusterSpec::FromMap({{"1ps", {"h:1"}}}).status(), kInvalidArgument,
                "job name '1ps' is invalid");
  EXPECT_STATUS(ClusterSpec::FromMap({{"p-s", {"h:1"}}}).status(), kInvalidArgument,
                "job name 'p-s' is invalid");
  EXPECT_STATUS(ClusterSpec::FromMap({{"_ps", {"h:1"}}}).status(), kInvalidArgument, "'_ps'");
  EXPECT_STATUS(ClusterSpec::FromMap({{"p s", {"h:1"}}}).status(), kInvalidArgument, "'p s'");
  ASSERT_OK(ClusterSpec::FromMap({{"Worker_2", {"h:1"}}}).status());
}

TEST(ClusterSpecTest, JobWithoutTasksIsAnError) {
  EXPECT_STATUS(ClusterSpec::FromMap({{"ps", {}}, {"worker", {"h:1"}}}).status(), kInvalidArgument,
                "job 'ps' has no tasks");
}

TEST(ClusterSpecTest, AtMostOneChief) {
  EXPECT_STATUS(ClusterSpec::FromMap({{"chief", {"h:1", "h:2"}}}).status(), kInvalidArgument,
                "job 'chief' has 2 tasks (h:1,h:2); a cluster has at most one chief");
  ASSERT_OK(ClusterSpec::FromMap({{"chief", {"h:1"}}, {"worker", {"h:2"}}}).status());
}

TEST(ClusterSpecTest, MalformedAddresses) {
  auto check = [](const std::string& address, const std::string& why) {
    SCOPED_TRACE(address);
    EXPECT_STATUS(
        ClusterSpec::FromMap({{"worker", {"h:1", address}}}).status(), kInvalidArgument,
        "/job:worker/replica:0/task:1: address '" + address + "' is not host:port: " + why);
  };
  check("localhost", "no ':port'");
  check(":2222", "the host is empty");
  check("localhost:", "the port is empty");
  check("localhost:http", "port 'http' is not an integer in 0..65535");
  check("localhost:-1", "port '-1'");
  check("localhost:+80", "port '+80'");
  check("localhost:65536", "port '65536'");
  check("localhost:99999999999", "port '99999999999'");
  check("a:b:1", "more than one ':'");
  check("local host:1", "bad character ' ' in the host");
  check("h/x:1", "bad character '/'");
  check("[::1:1", "unbalanced '[' in the host");
  check("[zz]:1", "bad character in the IPv6 host");
}

TEST(ClusterSpecTest, GoodAddresses) {
  ASSERT_OK(ClusterSpec::FromMap(
                {{"worker",
                  {"localhost:1", "127.0.0.1:65535", "[::1]:2222", "my-host.example_corp.com:80"}}})
                .status());
}

TEST(ClusterSpecTest, PortZeroOnlyWhenAllowed) {
  EXPECT_STATUS(ClusterSpec::FromMap({{"worker", {"localhost:0"}}}).status(), kInvalidArgument,
                "address 'localhost:0' has port 0, which is only allowed with allow_port_zero");
  absl::StatusOr<ClusterSpec> spec = ClusterSpec::FromMap(
      {{"ps", {"localhost:0"}}, {"worker", {"localhost:0", "localhost:0"}}}, AllowPortZero());
  ASSERT_OK(spec.status());  // port 0 may repeat: each task gets its own port
  EXPECT_EQ(spec->num_tasks("worker"), 2);
}

TEST(ClusterSpecTest, DuplicateAddressesAcrossTheCluster) {
  EXPECT_STATUS(
      ClusterSpec::FromMap({{"ps", {"localhost:2222"}}, {"worker", {"h:1", "localhost:2222"}}})
          .status(),
      kInvalidArgument,
      "address 'localhost:2222' is used by both /job:ps/replica:0/task:0 and "
      "/job:worker/replica:0/task:1");
  EXPECT_STATUS(ClusterSpec::FromMap({{"worker", {"h:1", "h:1"}}}).status(), kInvalidArgument,
                "address 'h:1' is used by both /job:worker/replica:0/task:0 and "
                "/job:worker/replica:0/task:1");
}

// ---- FromFlag / FromHostsFlags ----------------------------------------------

TEST(ClusterSpecTest, FromFlag) {
  absl::StatusOr<ClusterSpec> spec =
      ClusterSpec::FromFlag("ps=localhost:2222;worker=localhost:2223,localhost:2224");
  ASSERT_OK(spec.status());
  EXPECT_EQ(spec->job_map(),
            (ClusterSpec::JobMap{{"ps", {"localhost:2222"}},
                                 {"worker", {"localhost:2223", "localhost:2224"}}}));
}

TEST(ClusterSpecTest, FromFlagToleratesWhitespaceAndEmptyJobs) {
  absl::StatusOr<ClusterSpec> spec =
      ClusterSpec::FromFlag("  worker = localhost:2223 , localhost:2224 ;; ps=localhost:2222 ;\n");
  ASSERT_OK(spec.status());
  EXPECT_EQ(spec->ToString(), "ps=localhost:2222;worker=localhost:2223,localhost:2224");
}

TEST(ClusterSpecTest, FromFlagErrors) {
  EXPECT_STATUS(ClusterSpec::FromFlag("").status(), kInvalidArgument, "cluster '' has no jobs");
  EXPECT_STATUS(ClusterSpec::FromFlag(" ; ").status(), kInvalidArgument, "has no jobs");
  EXPECT_STATUS(ClusterSpec::FromFlag("ps=h:1;localhost:2").status(), kInvalidArgument,
                "cluster job 'localhost:2' is not job=host:port,...");
  EXPECT_STATUS(ClusterSpec::FromFlag("ps=h:1;worker=").status(), kInvalidArgument,
                "job 'worker' has no tasks in 'worker='");
  EXPECT_STATUS(ClusterSpec::FromFlag("worker=h:1,,h:2").status(), kInvalidArgument,
                "empty address in task list 'h:1,,h:2'");
  EXPECT_STATUS(ClusterSpec::FromFlag("worker=h:1,").status(), kInvalidArgument,
                "empty address in task list 'h:1,'");
  EXPECT_STATUS(ClusterSpec::FromFlag("worker=h:1;worker=h:2").status(), kInvalidArgument,
                "job 'worker' appears twice in cluster 'worker=h:1;worker=h:2'");
  EXPECT_STATUS(ClusterSpec::FromFlag("=h:1").status(), kInvalidArgument, "job name is empty");
  EXPECT_STATUS(ClusterSpec::FromFlag("ps=h:1;worker=h:1").status(), kInvalidArgument,
                "address 'h:1' is used by both");
  EXPECT_STATUS(ClusterSpec::FromFlag("worker=h:0").status(), kInvalidArgument, "allow_port_zero");
  ASSERT_OK(ClusterSpec::FromFlag("worker=h:0,h:0", AllowPortZero()).status());
}

TEST(ClusterSpecTest, FromHostsFlags) {
  absl::StatusOr<ClusterSpec> spec = ClusterSpec::FromHostsFlags("a:1, b:2", "c:3,d:4");
  ASSERT_OK(spec.status());
  EXPECT_EQ(spec->ToString(), "ps=a:1,b:2;worker=c:3,d:4");

  absl::StatusOr<ClusterSpec> workers_only = ClusterSpec::FromHostsFlags("", "c:3");
  ASSERT_OK(workers_only.status());
  EXPECT_EQ(workers_only->jobs(), std::vector<std::string>{"worker"});
}

TEST(ClusterSpecTest, FromHostsFlagsErrors) {
  EXPECT_STATUS(ClusterSpec::FromHostsFlags("a:1", "").status(), kInvalidArgument,
                "--worker_hosts is empty");
  EXPECT_STATUS(ClusterSpec::FromHostsFlags("a:1,,b:2", "c:3").status(), kInvalidArgument,
                "--ps_hosts: empty address in task list 'a:1,,b:2'");
  EXPECT_STATUS(ClusterSpec::FromHostsFlags("", "c:3,").status(), kInvalidArgument,
                "--worker_hosts: empty address");
  EXPECT_STATUS(ClusterSpec::FromHostsFlags("a:1", "a:1").status(), kInvalidArgument,
                "address 'a:1' is used by both /job:ps/replica:0/task:0");
  EXPECT_STATUS(ClusterSpec::FromHostsFlags("", "c").status(), kInvalidArgument,
                "address 'c' is not host:port");
}

// ---- Queries and printing ---------------------------------------------------

TEST(ClusterSpecTest, TaskAddressNotFound) {
  ClusterSpec spec = *ClusterSpec::FromFlag("ps=h:1;worker=h:2,h:3");
  EXPECT_STATUS(spec.TaskAddress("chief", 0).status(), kNotFound,
                "cluster has no job 'chief'; its jobs are [ps, worker]");
  EXPECT_STATUS(spec.TaskAddress("worker", 2).status(), kNotFound,
                "job 'worker' has no task 2; it has 2 task(s), 0..1");
  EXPECT_STATUS(spec.TaskAddress("worker", -1).status(), kNotFound, "has no task -1");
}

TEST(ClusterSpecTest, AllTasks) {
  ClusterSpec spec = *ClusterSpec::FromFlag("worker=h:2,h:3;ps=h:1");
  std::vector<ClusterSpec::Task> tasks = spec.AllTasks();
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].name, "/job:ps/replica:0/task:0");
  EXPECT_EQ(tasks[0].address, "h:1");
  EXPECT_EQ(tasks[1].name, "/job:worker/replica:0/task:0");
  EXPECT_EQ(tasks[1].address, "h:2");
  EXPECT_EQ(tasks[2].name, "/job:worker/replica:0/task:1");
  EXPECT_EQ(tasks[2].address, "h:3");
}

TEST(ClusterSpecTest, ToStringRoundTrips) {
  ClusterSpec spec =
      *ClusterSpec::FromFlag("chief=h:0;ps=[::1]:5,h:1;worker=h:2,h:3", AllowPortZero());
  EXPECT_EQ(spec.ToString(), "chief=h:0;ps=[::1]:5,h:1;worker=h:2,h:3");
  absl::StatusOr<ClusterSpec> again = ClusterSpec::FromFlag(spec.ToString(), AllowPortZero());
  ASSERT_OK(again.status());
  EXPECT_EQ(*again, spec);
  EXPECT_NE(*again, *ClusterSpec::FromFlag("worker=h:2"));
}

TEST(ClusterSpecTest, ToJson) {
  ClusterSpec spec = *ClusterSpec::FromFlag("ps=localhost:2222;worker=localhost:2223,h:4");
  EXPECT_EQ(spec.ToJson(), R"({"ps":["localhost:2222"],"worker":["localhost:2223","h:4"]})");
  EXPECT_EQ(ClusterSpec().ToJson(), "{}");
}

TEST(ClusterSpecTest, TaskNames) {
  EXPECT_EQ(TaskName("ps", 3), "/job:ps/replica:0/task:3");
  EXPECT_EQ((TaskId{"worker", 1}.name()), "/job:worker/replica:0/task:1");
}

// ---- TF_CONFIG ----------------------------------------------------------------

constexpr char kSeedConfig[] =
    R"({"cluster": {"worker": ["localhost:20000", "localhost:20001"]},
        "task": {"type": "worker", "index": 1}})";

TEST(TfConfigTest, ParsesTheSeedConfig) {
  absl::StatusOr<TfConfig> config = TfConfig::ParseTfConfig(kSeedConfig);
  ASSERT_OK(config.status());
  EXPECT_EQ(config->cluster.ToString(), "worker=localhost:20000,localhost:20001");
  EXPECT_EQ(config->task, (TaskId{"worker", 1}));
  EXPECT_EQ(config->rpc_layer, "");
  EXPECT_FALSE(IsChief(*config));
}

TEST(TfConfigTest, ParsesAllJobsAndRpcLayer) {
  absl::StatusOr<TfConfig> config = TfConfig::ParseTfConfig(R"({
      "cluster": {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"],
                  "evaluator": ["h:5"]},
      "task": {"type": "ps", "index": 0},
      "rpc_layer": "grpc",
      "environment": "cloud"})");
  ASSERT_OK(config.status());
  EXPECT_EQ(config->cluster.jobs(),
            (std::vector<std::string>{"chief", "evaluator", "ps", "worker"}));
  EXPECT_EQ(config->task, (TaskId{"ps", 0}));
  EXPECT_EQ(config->rpc_layer, "grpc");
}

TEST(TfConfigTest, MissingIndexMeansZero) {
  absl::StatusOr<TfConfig> config =
      TfConfig::ParseTfConfig(R"({"cluster": {"chief": ["h:1"]}, "task": {"type": "chief"}})");
  ASSERT_OK(config.status());
  EXPECT_EQ(config->task, (TaskId{"chief", 0}));
}

TEST(TfConfigTest, EvaluatorNeedNotBeInTheCluster) {
  absl::StatusOr<TfConfig> config = TfConfig::ParseTfConfig(
      R"({"cluster": {"worker": ["h:1"]}, "task": {"type": "evaluator", "index": 0}})");
  ASSERT_OK(config.status());
  EXPECT_EQ(config->task, (TaskId{"evaluator", 0}));
  EXPECT_FALSE(config->cluster.HasJob("evaluator"));
}

TEST(TfConfigTest, EvaluatorInTheClusterIsRangeChecked) {
  EXPECT_STATUS(TfConfig::ParseTfConfig(R"({"cluster": {"worker": ["h:1"], "evaluator": ["h:2"]},
                                           "task": {"type": "evaluator", "index": 1}})")
                    .status(),
                kInvalidArgument, "\"task\".\"index\" 1 is out of range: job 'evaluator'");
  EXPECT_STATUS(TfConfig::ParseTfConfig(
                    R"({"cluster": {"worker": ["h:1"], "evaluator": ["h:2", "h:3"]},
                        "task": {"type": "worker"}})")
                    .status(),
                kInvalidArgument, "\"evaluator\" has 2 tasks; a cluster has at most one evaluator");
}

TEST(TfConfigTest, UnknownTaskType) {
  EXPECT_STATUS(
      TfConfig::ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": {"type": "ps"}})")
          .status(),
      kInvalidArgument,
      "\"task\".\"type\" 'ps' is not a job of the cluster; its jobs are worker=h:1");
}

TEST(TfConfigTest, IndexOutOfRange) {
  EXPECT_STATUS(
      TfConfig::ParseTfConfig(
          R"({"cluster": {"worker": ["h:1", "h:2"]}, "task": {"type": "worker", "index": 2}})")
          .status(),
      kInvalidArgument, "\"task\".\"index\" 2 is out of range: job 'worker' has 2 task(s)");
}

TEST(TfConfigTest, BadIndexValues) {
  auto parse = [](const std::string& index) {
    return TfConfig::ParseTfConfig(R"({"cluster": {"worker": ["h:1"]},
                                       "task": {"type": "worker", "index": )" +
                                   index + "}}")
        .status();
  };
  EXPECT_STATUS(parse("\"1\""), kInvalidArgument,
                "\"task\".\"index\" must be a non-negative integer, got a string \"1\"");
  EXPECT_STATUS(parse("-1"), kInvalidArgument,
                "\"task\".\"index\" must be a non-negative integer, got -1");
  EXPECT_STATUS(parse("0.5"), kInvalidArgument, "got 0.5");
  EXPECT_STATUS(parse("1e12"), kInvalidArgument, "must be a non-negative integer");
  EXPECT_STATUS(parse("null"), kInvalidArgument, "got null");
}

TEST(TfConfigTest, AtMostOneChief) {
  EXPECT_STATUS(TfConfig::ParseTfConfig(
                    R"({"cluster": {"chief": ["h:1", "h:2"]}, "task": {"type": "chief"}})")
                    .status(),
                kInvalidArgument,
                "\"cluster\": job 'chief' has 2 tasks (h:1,h:2); a cluster has at most one chief");
}

TEST(TfConfigTest, ClusterRulesApply) {
  EXPECT_STATUS(TfConfig::ParseTfConfig(
                    R"({"cluster": {"worker": ["h:1", "h:1"]}, "task": {"type": "worker"}})")
                    .status(),
                kInvalidArgument, "\"cluster\": address 'h:1' is used by both");
  EXPECT_STATUS(
      TfConfig::ParseTfConfig(R"({"cluster": {"worker": ["h:99999"]}, "task": {"type": "worker"}})")
          .status(),
      kInvalidArgument, "port '99999'");
  EXPECT_STATUS(
      TfConfig::ParseTfConfig(R"({"cluster": {"worker": []}, "task": {"type": "worker"}})")
          .status(),
      kInvalidArgument, "job 'worker' has no tasks");
  EXPECT_STATUS(TfConfig::ParseTfConfig(R"({"cluster": {}, "task": {"type": "worker"}})").status(),
                kInvalidArgument, "cluster has no jobs");
  EXPECT_STATUS(
      TfConfig::ParseTfConfig(R"({"cluster": {"bad-job": ["h:1"]}, "task": {"type": "worker"}})")
          .status(),
      kInvalidArgument, "job name 'bad-job' is invalid");
  ASSERT_OK(
      TfConfig::ParseTfConfig(
          R"({"cluster": {"worker": ["h:0", "h:0"]}, "task": {"type": "worker"}})", AllowPortZero())
          .status());
}

TEST(TfConfigTest, MalformedJson) {
  EXPECT_STATUS(TfConfig::ParseTfConfig(R"({"cluster": )").status(), kInvalidArgument,
                "TF_CONFIG is not valid JSON: ");
  EXPECT_STATUS(TfConfig::ParseTfConfig("not json").status(), kInvalidArgument, "in 'not json'");
  // JSON, but not an object.
  EXPECT_STATUS(TfConfig::ParseTfConfig("[1, 2]").status(), kInvalidArgument,
                "TF_CONFIG is not a JSON object; expected {\"cluster\": {...}, \"task\": {...}}, "
                "got '[1, 2]'");
  EXPECT_STATUS(TfConfig::ParseTfConfig(" \"worker\"").status(), kInvalidArgument,
                "TF_CONFIG is not a JSON object");
  EXPECT_STATUS(TfConfig::ParseTfConfig("").status(), kInvalidArgument,
                "TF_CONFIG is not valid JSON");
}

TEST(TfConfigTest, DuplicateJobNames) {
  EXPECT_STATUS(TfConfig::ParseTfConfig(R"({"cluster": {"worker": ["h:1"], "worker": ["h:2"]},
                                           "task": {"type": "worker"}})")
                    .status(),
                kInvalidArgument, "Repeated map key: 'worker' is already set");
}

TEST(TfConfigTest, MissingSections) {
  EXPECT_STATUS(TfConfig::ParseTfConfig(R"({"task": {"type": "worker"}})").status(),
                kInvalidArgument, "TF_CONFIG has no \"cluster\"");
  EXPECT_STATUS(TfConfig::ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}})").status(),
                kInvalidArgument, "TF_CONFIG has no \"task\"");
  EXPECT_STATUS(
      TfConfig::ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": {"index": 0}})").status(),
      kInvalidArgument, "\"task\" has no \"type\": {\"index\":0}");
}

TEST(TfConfigTest, WrongJsonTypes) {
  EXPECT_STATUS(
      TfConfig::ParseTfConfig(R"({"cluster": ["h:1"], "task": {"type": "worker"}})").status(),
      kInvalidArgument, "\"cluster\" must be an object of job name");
  EXPECT_STATUS(
      TfConfig::ParseTfConfig(R"({"cluster": {"worker": "h:1"}, "task": {"type": "worker"}})")
          .status(),
      kInvalidArgument,
      "\"cluster\".\"worker\" must be an array of \"host:port\" strings, got a string \"h:1\"");
  EXPECT_STATUS(TfConfig::ParseTfConfig(
                    R"({"cluster": {"worker": ["h:1", 2222]}, "task": {"type": "worker"}})")
                    .status(),
                kInvalidArgument,
                "\"cluster\".\"worker\"[1] must be a \"host:port\" string, got a number 2222");
  EXPECT_STATUS(
      TfConfig::ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": "worker"})").status(),
      kInvalidArgument, "\"task\" must be an object");
  EXPECT_STATUS(
      TfConfig::ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": {"type": 1}})").status(),
      kInvalidArgument, "\"task\".\"type\" must be a string, got a number 1");
  EXPECT_STATUS(TfConfig::ParseTfConfig(R"({"cluster": {"worker": ["h:1"]},
                                           "task": {"type": "worker"}, "rpc_layer": true})")
                    .status(),
                kInvalidArgument, "\"rpc_layer\" must be a string, got a boolean true");
  // TensorFlow's other layers are not served: a task started anyway could
  // reach no peer that expects one.
  EXPECT_STATUS(TfConfig::ParseTfConfig(R"({"cluster": {"worker": ["h:1"]},
                                           "task": {"type": "worker"}, "rpc_layer": "grpc+verbs"})")
                    .status(),
                kInvalidArgument, "\"rpc_layer\" is 'grpc+verbs'; tensorgrid speaks only \"grpc\"");
}

TEST(TfConfigTest, ClusterOfNeedsNoTaskAndIgnoresOne) {
  bool has_task = true;
  absl::StatusOr<ClusterSpec> cluster =
      TfConfig::ClusterOf(R"({"cluster": {"worker": ["h:1", "h:2"]}})", {}, &has_task);
  ASSERT_OK(cluster.status());
  EXPECT_EQ(cluster->num_tasks("worker"), 2);
  EXPECT_FALSE(has_task);
  // Even a task that names no job of the cluster: it is not looked at.
  cluster = TfConfig::ClusterOf(R"({"cluster": {"ps": ["h:1"]}, "task": {"type": "chief"}})", {},
                                &has_task);
  ASSERT_OK(cluster.status());
  EXPECT_TRUE(has_task);
  // The rest is checked as ParseTfConfig checks it.
  EXPECT_STATUS(TfConfig::ClusterOf("[1]").status(), kInvalidArgument,
                "TF_CONFIG is not a JSON object");
  EXPECT_STATUS(TfConfig::ClusterOf(R"({"task": {"type": "worker"}})").status(), kInvalidArgument,
                "TF_CONFIG has no \"cluster\"");
  EXPECT_STATUS(TfConfig::ClusterOf(R"({"cluster": {"worker": "h:1"}})").status(), kInvalidArgument,
                "\"cluster\".\"worker\" must be an array");
  EXPECT_STATUS(
      TfConfig::ClusterOf(R"({"cluster": {"worker": ["h:1"]}, "rpc_layer": "grpc+gdr"})").status(),
      kInvalidArgument, "\"rpc_layer\" is 'grpc+gdr'");
}

TEST(TfConfigTest, ToJsonRoundTrips) {
  TfConfig config = *TfConfig::ParseTfConfig(R"({
      "cluster": {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"]},
      "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc"})");
  EXPECT_EQ(config.ToJson(), R"({"cluster":{"chief":["h:1"],"ps":["h:4"],"worker":["h:2","h:3"]},)"
                             R"("task":{"type":"worker","index":1},"rpc_layer":"grpc"})");
  absl::StatusOr<TfConfig> again = TfConfig::ParseTfConfig(config.ToJson());
  ASSERT_OK(again.status());
  EXPECT_EQ(*again, config);

  TfConfig seed = *TfConfig::ParseTfConfig(kSeedConfig);
  EXPECT_EQ(seed.ToJson(), R"({"cluster":{"worker":["localhost:20000","localhost:20001"]},)"
                           R"("task":{"type":"worker","index":1}})");
  EXPECT_EQ(*TfConfig::ParseTfConfig(seed.ToJson()), seed);
}

TEST(TfConfigTest, FromEnvironment) {
  unsetenv("TF_CONFIG");
  EXPECT_STATUS(TfConfig::FromEnvironment().status(), kNotFound, "TF_CONFIG is not set");
  setenv("TF_CONFIG", "", 1);
  EXPECT_STATUS(TfConfig::FromEnvironment().status(), kNotFound, "TF_CONFIG is not set");
  setenv("TF_CONFIG", kSeedConfig, 1);
  absl::StatusOr<TfConfig> config = TfConfig::FromEnvironment();
  ASSERT_OK(config.status());
  EXPECT_EQ(config->task, (TaskId{"worker", 1}));
  setenv("TF_CONFIG", "{", 1);
  EXPECT_STATUS(TfConfig::FromEnvironment().status(), kInvalidArgument, "not valid JSON");
  unsetenv("TF_CONFIG");
}

TEST(TfConfigTest, IsChiefFollowsTensorFlow) {
  auto config = [](const std::string& cluster, const std::string& job, int index) {
    TfConfig out;
    out.cluster = *ClusterSpec::FromFlag(cluster);
    out.task = TaskId{job, index};
    return out;
  };
  // With a chief job, only the chief is chief.
  EXPECT_TRUE(IsChief(config("chief=h:1;worker=h:2,h:3", "chief", 0)));
  EXPECT_FALSE(IsChief(config("chief=h:1;worker=h:2,h:3", "worker", 0)));
  // Without one, worker 0 is.
  EXPECT_TRUE(IsChief(config("ps=h:1;worker=h:2,h:3", "worker", 0)));
  EXPECT_FALSE(IsChief(config("ps=h:1;worker=h:2,h:3", "worker", 1)));
  EXPECT_FALSE(IsChief(config("ps=h:1;worker=h:2,h:3", "ps", 0)));
  // An evaluator runs alone and is its own chief.
  EXPECT_TRUE(IsChief(config("worker=h:2", "evaluator", 0)));
}

}  // namespace
}  // namespace tensorgrid
