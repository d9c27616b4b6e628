// The distributed runtime's failure, shutdown and security behaviour with
// real processes: tg_server tasks on 127.0.0.1 free ports, driven by grpc://
// sessions from this test. The seed cluster of tests/testdata/
// seed_placement.pbtxt:
//
//   /job:ps/task:0          /job:worker/task:0        /job:worker/task:1
//   x, y (variables) ══x,y══► z1b = x·y + x ══z1b══► z2b = z1b·x + x
//
// Every wait is bounded; every process started is killed at the end.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/platform/free_port.h"
#include "core/platform/status_testutil.h"
#include "core/public/session.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

extern char** environ;

namespace tensorgrid {
namespace {

constexpr char kPs[] = "/job:ps/replica:0/task:0";
constexpr char kWorker1[] = "/job:worker/replica:0/task:1";

std::string Runfile(const std::string& path) { return path; }  // tests run in the runfiles root

std::string TempFile(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(dir == nullptr ? "/tmp" : dir, "/", name);
  std::ofstream(path) << text;
  return path;
}

// One tg_server process. Killed (SIGKILL) when destroyed unless it already
// exited.
class Task {
 public:
  Task(const std::string& cluster, const std::string& job, int index,
       std::vector<std::string> extra_env = {})
      : job_(job), index_(index) {
    int out[2];
    if (pipe(out) != 0) return;
    std::vector<std::string> args = {Runfile("tools/tg_server"), "--cluster=" + cluster,
                                     "--job_name=" + job, absl::StrCat("--task_index=", index)};
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::string(*e).rfind("TG_", 0) != 0) env.push_back(*e);
    }
    for (std::string& e : extra_env) env.push_back(std::move(e));
    std::vector<char*> argv, envp;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    stdout_ = out[0];
  }
  ~Task() {
    Kill(SIGKILL);
    if (stdout_ >= 0) close(stdout_);
  }

  // Waits (bounded) for "tg_server ready ..."; false if the process died or
  // stayed silent.
  bool WaitReady(absl::Duration timeout = absl::Seconds(60)) {
    if (pid_ <= 0) return false;
    std::string line;
    const absl::Time deadline = absl::Now() + timeout;
    while (line.find('\n') == std::string::npos) {
      pollfd p{stdout_, POLLIN, 0};
      const int ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
      if (ms <= 0 || poll(&p, 1, ms) <= 0) return false;
      char buf[256];
      const ssize_t n = read(stdout_, buf, sizeof(buf));
      if (n <= 0) return false;
      line.append(buf, n);
    }
    return line.rfind("tg_server ready ", 0) == 0;
  }

  void Kill(int signal) {
    if (pid_ > 0 && !exited_) kill(pid_, signal);
    if (signal == SIGKILL) WaitExit(absl::Seconds(30));
  }

  // The exit status after a bounded wait; -1 if still running then.
  int WaitExit(absl::Duration timeout) {
    if (pid_ <= 0) return -1;
    const absl::Time deadline = absl::Now() + timeout;
    while (!exited_) {
      int status = 0;
      const pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exited_ = true;
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      if (absl::Now() >= deadline) return -1;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return exit_status_;
  }

 private:
  std::string job_;
  int index_;
  pid_t pid_ = -1;
  int stdout_ = -1;
  bool exited_ = false;
  int exit_status_ = -1;
};

GraphDef SeedGraph() {
  std::ifstream in("tests/testdata/seed_placement.pbtxt");
  std::stringstream text;
  text << in.rdbuf();
  GraphDef g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text.str(), &g));
  return g;
}

// The three-task seed cluster on free ports.
class SeedCluster {
 public:
  explicit SeedCluster(std::vector<std::string> env = {}) : env_(std::move(env)) {
    ports_ = FreePorts(3);  // distinct
    EXPECT_EQ(ports_.size(), 3u);
    ports_.resize(3);  // 0 where none was found: the cluster then fails clearly
    spec_ = absl::StrCat("ps=127.0.0.1:", ports_[0], ";worker=127.0.0.1:", ports_[1],
                         ",127.0.0.1:", ports_[2]);
  }

  // Starts the tasks named (all by default) and waits until they serve.
  bool Start(std::vector<int> which = {0, 1, 2}) {
    bool ok = true;
    for (int i : which) {
      tasks_[i] = std::make_unique<Task>(spec_, i == 0 ? "ps" : "worker", i == 0 ? 0 : i - 1, env_);
    }
    for (int i : which) ok = tasks_[i]->WaitReady() && ok;
    return ok;
  }

  Task& task(int i) { return *tasks_[i]; }
  std::string address(int i) const { return absl::StrCat("127.0.0.1:", ports_[i]); }
  std::string target() const { return "grpc://" + address(1); }  // worker 0

  std::unique_ptr<Session> Connect(int64_t timeout_ms = 20000, int master = 1) {
    SessionOptions options;
    options.target = "grpc://" + address(master);
    options.config.set_operation_timeout_in_ms(timeout_ms);
    absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? *std::move(session) : nullptr;
  }

 private:
  std::vector<std::string> env_;
  std::vector<int> ports_;
  std::string spec_;
  std::unique_ptr<Task> tasks_[3];
};

absl::Status RunSeed(Session& session, bool initialize) {
  std::vector<Tensor> out;
  if (initialize) TG_RETURN_IF_ERROR(session.Run({}, {}, {"x/Assign", "y/Assign"}, &out));
  TG_RETURN_IF_ERROR(session.Run({}, {"z2b"}, {}, &out));
  if (out.size() != 1 || out[0].NumElements() != 4 || out[0].data<float>()[0] != 7) {
    return errors::Internal("z2b is not [[7,7],[7,7]]");
  }
  return absl::OkStatus();
}

TEST(DistributedRuntimeTest, MissingTaskAtStartupIsUnavailableNamingItAndItsAddress) {
  SeedCluster cluster;
  ASSERT_TRUE(cluster.Start({1, 2}));  // no ps
  std::unique_ptr<Session> session = cluster.Connect(/*timeout_ms=*/1500);
  ASSERT_NE(session, nullptr);
  EXPECT_STATUS(session->Create(SeedGraph()), kUnavailable,
                absl::StrCat("cannot reach 1 of 3 tasks after 1500 ms: ", kPs));
  EXPECT_STATUS(session->Create(SeedGraph()), kUnavailable, cluster.address(0));
}

TEST(DistributedRuntimeTest, TaskStartedLateIsWaitedFor) {
  SeedCluster cluster;
  ASSERT_TRUE(cluster.Start({1, 2}));
  std::unique_ptr<Session> session = cluster.Connect();
  ASSERT_NE(session, nullptr);
  absl::Status created;
  std::thread client([&] { created = session->Create(SeedGraph()); });
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_TRUE(cluster.Start({0}));
  client.join();
  ASSERT_OK(created);
  EXPECT_OK(RunSeed(*session, /*initialize=*/true));
}

TEST(DistributedRuntimeTest, DeadTaskFailsTheStepUnavailableNamingIt) {
  SeedCluster cluster;
  ASSERT_TRUE(cluster.Start());
  std::unique_ptr<Session> session = cluster.Connect(/*timeout_ms=*/5000);
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SeedGraph()));
  ASSERT_OK(RunSeed(*session, /*initialize=*/true));
  cluster.task(2).Kill(SIGKILL);
  EXPECT_STATUS(RunSeed(*session, false), kUnavailable, kWorker1);
}

// The ps holds x and y; the workers pull them with RecvTensor. Its death
// reaches the client named, not as a worker's address.
TEST(DistributedRuntimeTest, DeadPsFailsTheStepUnavailableNamingIt) {
  SeedCluster cluster;
  ASSERT_TRUE(cluster.Start());
  std::unique_ptr<Session> session = cluster.Connect(/*timeout_ms=*/5000);
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SeedGraph()));
  ASSERT_OK(RunSeed(*session, /*initialize=*/true));
  cluster.task(0).Kill(SIGKILL);
  EXPECT_STATUS(RunSeed(*session, false), kUnavailable, absl::StrCat("task ", kPs));
}

TEST(DistributedRuntimeTest, RestartedPsIsAbortedNamingItAndItsVariablesAreGone) {
  SeedCluster cluster;
  ASSERT_TRUE(cluster.Start());
  std::unique_ptr<Session> session = cluster.Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SeedGraph()));
  ASSERT_OK(RunSeed(*session, /*initialize=*/true));
  // Variables on the ps outlive the client session.
  std::unique_ptr<Session> second = cluster.Connect();
  ASSERT_NE(second, nullptr);
  ASSERT_OK(second->Create(SeedGraph()));
  ASSERT_OK(RunSeed(*second, /*initialize=*/false));

  cluster.task(0).Kill(SIGKILL);
  ASSERT_TRUE(cluster.Start({0}));  // a new process on the same port
  EXPECT_STATUS(RunSeed(*session, false), kAborted, absl::StrCat("task ", kPs, " restarted"));
  std::unique_ptr<Session> fresh = cluster.Connect();
  ASSERT_NE(fresh, nullptr);
  ASSERT_OK(fresh->Create(SeedGraph()));
  EXPECT_STATUS(RunSeed(*fresh, false), kFailedPrecondition, "uninitialized variable");
  EXPECT_OK(RunSeed(*fresh, /*initialize=*/true));
}

// The ps comes back on its port only after a while: the first step after
// it must still be the restart's Aborted, not a wait for a partition the
// new process never registered (which hung until the client's deadline).
TEST(DistributedRuntimeTest, PsRestartedAfterAPauseIsAbortedOnTheFirstStep) {
  const int master = 1;  // the session's master: worker 0
  for (const std::vector<std::string>& env :
       {std::vector<std::string>{}, std::vector<std::string>{"TG_BULK_TRANSFER=0"}}) {
    SeedCluster cluster(env);
    ASSERT_TRUE(cluster.Start());
    std::unique_ptr<Session> session = cluster.Connect(/*timeout_ms=*/60000, master);
    ASSERT_NE(session, nullptr);
    ASSERT_OK(session->Create(SeedGraph()));
    ASSERT_OK(RunSeed(*session, /*initialize=*/true));
    CallableOptions callable_options;
    callable_options.add_fetch("z2b");
    absl::StatusOr<Session::CallableHandle> callable = session->MakeCallable(callable_options);
    ASSERT_OK(callable.status());
    std::vector<Tensor> fetched;
    ASSERT_OK(session->RunCallable(*callable, {}, &fetched, nullptr));
    cluster.task(0).Kill(SIGKILL);
    absl::SleepFor(absl::Seconds(10));
    ASSERT_TRUE(cluster.Start({0}));
    const absl::Time start = absl::Now();
    EXPECT_STATUS(session->RunCallable(*callable, {}, &fetched, nullptr), kAborted,
                  absl::StrCat("task ", kPs, " restarted"));
    EXPECT_STATUS(RunSeed(*session, false), kAborted, absl::StrCat("task ", kPs, " restarted"));
    std::cerr << "the first steps after the restart ended in " << absl::Now() - start << "\n";
  }
}

TEST(DistributedRuntimeTest, ResetDropsThePsVariables) {
  SeedCluster cluster;
  ASSERT_TRUE(cluster.Start());
  std::unique_ptr<Session> session = cluster.Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SeedGraph()));
  ASSERT_OK(RunSeed(*session, /*initialize=*/true));
  SessionOptions options;
  options.target = cluster.target();
  ASSERT_OK(Reset(options, {}));
  std::unique_ptr<Session> after = cluster.Connect();
  ASSERT_NE(after, nullptr);
  ASSERT_OK(after->Create(SeedGraph()));
  EXPECT_STATUS(RunSeed(*after, false), kFailedPrecondition, "uninitialized variable");
}

TEST(DistributedRuntimeTest, TokenIsRequiredAndTasksUseItAmongThemselves) {
  const std::string token = TempFile("cluster_token", "let-me-in\n");
  SeedCluster cluster({"TG_AUTH_TOKEN_FILE=" + token});
  ASSERT_TRUE(cluster.Start());
  {
    std::unique_ptr<Session> anonymous = cluster.Connect();
    ASSERT_NE(anonymous, nullptr);
    EXPECT_STATUS(anonymous->Create(SeedGraph()), kUnauthenticated, "requires an auth token");
  }
  setenv("TG_AUTH_TOKEN_FILE", TempFile("wrong_token", "guess").c_str(), 1);
  {
    std::unique_ptr<Session> wrong = cluster.Connect();
    ASSERT_NE(wrong, nullptr);
    EXPECT_STATUS(wrong->Create(SeedGraph()), kUnauthenticated, "does not match");
  }
  setenv("TG_AUTH_TOKEN_FILE", token.c_str(), 1);
  std::unique_ptr<Session> session = cluster.Connect();
  unsetenv("TG_AUTH_TOKEN_FILE");
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SeedGraph()));
  // Three tasks exchange x, y and z1b: the token works between them too.
  EXPECT_OK(RunSeed(*session, /*initialize=*/true));
}

// 8 MiB filled on the ps and summed on worker 1: the tensor crosses between
// two tg_server processes (by bulk ticket, or inside gRPC under TLS).
absl::Status RunLargeTransfer(Session& session) {
  const int64_t n = int64_t{2} << 20;
  GraphDef g;
  if (!google::protobuf::TextFormat::ParseFromString(
          absl::StrCat(R"pb(
                         node { name: "large/dims" op: "Const" device: "/job:ps/task:0"
                                attr {
                                  key: "dtype"
                                  value { type: DT_INT32 }
                                }
                                attr { key: "value"
                                       value { tensor { dtype: DT_INT32
                                                        tensor_shape { dim { size: 1 } }
                                                        int_val:)pb",
                       n, R"pb(}
                               } } }
    node { name: "large/one_and_a_half" op: "Const" device: "/job:ps/task:0"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1.5 } } } }
    node { name: "large/x" op: "Fill" input: "large/dims" input: "large/one_and_a_half" device: "/job:ps/task:0"
      attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "large/axis" op: "Const" device: "/job:worker/task:1"
      attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
    node { name: "large/sum" op: "Sum" input: "large/x" input: "large/axis" device: "/job:worker/task:1"
      attr { key: "T" value { type: DT_FLOAT } } }
  )pb"),
          &g)) {
    return errors::Internal("the large-transfer graph does not parse");
  }
  TG_RETURN_IF_ERROR(session.Extend(g));
  std::vector<Tensor> out;
  TG_RETURN_IF_ERROR(session.Run({}, {"large/sum"}, {}, &out));
  if (out.size() != 1 || out[0].data<float>()[0] != 1.5f * static_cast<float>(n)) {
    return errors::Internal("sum of the 8 MiB tensor is wrong: ",
                            out.empty() ? "nothing" : out[0].DebugString());
  }
  return absl::OkStatus();
}

TEST(DistributedRuntimeTest, LargeTensorCrossesBetweenTasks) {
  SeedCluster cluster;
  ASSERT_TRUE(cluster.Start());
  std::unique_ptr<Session> session = cluster.Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(GraphDef()));
  EXPECT_OK(RunLargeTransfer(*session));
}

// Mutual TLS everywhere: each task serves with its certificate and presents
// it to the others; the client presents its own.
TEST(DistributedRuntimeTest, MutualTlsBetweenTasksAndWithTheClient) {
  const std::string dir = "tests/testdata/tls/";
  SeedCluster cluster({"TG_TLS_CA_FILE=" + dir + "ca.pem", "TG_TLS_CERT_FILE=" + dir + "server.pem",
                       "TG_TLS_KEY_FILE=" + dir + "server.key"});
  ASSERT_TRUE(cluster.Start());
  {
    std::unique_ptr<Session> plaintext = cluster.Connect(/*timeout_ms=*/3000);
    ASSERT_NE(plaintext, nullptr);
    EXPECT_STATUS(plaintext->Create(SeedGraph()), kUnavailable, cluster.address(1));
  }
  setenv("TG_TLS_CA_FILE", (dir + "ca.pem").c_str(), 1);
  setenv("TG_TLS_CERT_FILE", (dir + "client.pem").c_str(), 1);
  setenv("TG_TLS_KEY_FILE", (dir + "client.key").c_str(), 1);
  std::unique_ptr<Session> session = cluster.Connect();
  for (const char* name : {"TG_TLS_CA_FILE", "TG_TLS_CERT_FILE", "TG_TLS_KEY_FILE"}) unsetenv(name);
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SeedGraph()));
  EXPECT_OK(RunSeed(*session, /*initialize=*/true));
  EXPECT_OK(RunLargeTransfer(*session));  // no bulk port under TLS: inside gRPC
}

// Garbage bytes to every method of both services (21): InvalidArgument naming
// the method; the cluster then still runs the seed example.
TEST(DistributedRuntimeTest, GarbageRequestsAreInvalidArgumentAndTheTaskKeepsServing) {
  SeedCluster cluster;
  ASSERT_TRUE(cluster.Start());
  grpc::GenericStub stub(
      grpc::CreateChannel(cluster.address(1), grpc::InsecureChannelCredentials()));
  const std::string garbage("\xff\xff\xff\xff\x0f\x12garbage\x00\x01", 15);
  std::vector<std::string> methods;
  for (const char* m : {"CreateSession", "ExtendSession", "RunStep", "MakeCallable", "RunCallable",
                        "ReleaseCallable", "CloseSession", "ListDevices", "Reset"}) {
    methods.push_back(absl::StrCat("/tensorgrid.MasterService/", m));
  }
  for (const char* m : {"GetStatus", "CreateWorkerSession", "DeleteWorkerSession", "RegisterGraph",
                        "DeregisterGraph", "RunGraph", "CleanupGraph", "RecvTensor", "CleanupAll",
                        "CompleteGroup", "CompleteInstance", "RecvBuf"}) {
    methods.push_back(absl::StrCat("/tensorgrid.WorkerService/", m));
  }
  for (const std::string& method : methods) {
    grpc::Slice slice(garbage);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    grpc::Status status;
    absl::Notification done;
    stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response, [&](grpc::Status s) {
      status = std::move(s);
      done.Notify();
    });
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60))) << method;
    // gRPC's codes are absl's (both google.rpc.Code).
    EXPECT_STATUS(
        absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message()),
        kInvalidArgument, absl::StrCat("request to ", method, " is not a valid message"));
  }
  std::unique_ptr<Session> session = cluster.Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SeedGraph()));
  EXPECT_OK(RunSeed(*session, /*initialize=*/true));
}

TEST(DistributedRuntimeTest, EightClientsTwoHundredStepsEach) {
  SeedCluster cluster;
  ASSERT_TRUE(cluster.Start());
  {
    std::unique_ptr<Session> init = cluster.Connect();
    ASSERT_NE(init, nullptr);
    ASSERT_OK(init->Create(SeedGraph()));
    ASSERT_OK(RunSeed(*init, /*initialize=*/true));
  }
  std::atomic<int> failures{0};
  std::string first_error;
  absl::Mutex mu;
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      std::unique_ptr<Session> session = cluster.Connect();
      absl::Status s =
          session == nullptr ? errors::Internal("no session") : session->Create(SeedGraph());
      for (int step = 0; s.ok() && step < 200; ++step) s = RunSeed(*session, false);
      if (!s.ok()) {
        failures.fetch_add(1);
        absl::MutexLock lock(&mu);
        if (first_error.empty()) first_error = s.ToString();
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0) << first_error;
}

// SIGTERM to a task while a client steps through it: the client's step fails
// (no hang), the task exits 0, and the surviving tasks still serve.
TEST(DistributedRuntimeTest, TaskShutdownWhileAClientRuns) {
  SeedCluster cluster;
  ASSERT_TRUE(cluster.Start());
  std::unique_ptr<Session> session = cluster.Connect(/*timeout_ms=*/10000);
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Create(SeedGraph()));
  ASSERT_OK(RunSeed(*session, /*initialize=*/true));
  std::atomic<bool> stop{false};
  std::atomic<int> ok_steps{0};
  absl::Status failure;
  std::thread client([&] {
    while (!stop.load()) {
      absl::Status s = RunSeed(*session, false);
      if (!s.ok()) {
        failure = s;
        return;
      }
      ok_steps.fetch_add(1);
    }
  });
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (ok_steps.load() < 5 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(10));
  cluster.task(2).Kill(SIGTERM);
  EXPECT_EQ(cluster.task(2).WaitExit(absl::Seconds(30)), 0);
  stop.store(true);
  client.join();
  ASSERT_FALSE(failure.ok()) << "the client never noticed worker 1 going away";
  EXPECT_TRUE(absl::IsAborted(failure) || absl::IsUnavailable(failure) ||
              absl::IsCancelled(failure))
      << failure;
  // Worker 0 and the ps still serve a graph that does not need worker 1.
  std::vector<Tensor> out;
  EXPECT_OK(session->Run({}, {"z1b"}, {}, &out));
}

}  // namespace
}  // namespace tensorgrid
