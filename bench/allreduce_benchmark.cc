// All-reduce bus bandwidth of CollectiveReduce across tasks, N = 2 and 4
// processes on loopback; bench/allreduce_peer.py measures the peers (gloo,
// MPI_Allreduce, a TCP stream) the same way, bench/run_allreduce.sh runs
// both and prints them side by side.
//
//   this process: N client threads    child processes: /job:worker/task:0..N-1
//   client i ──RunCallable (grpc://)──► task i: v (float32 Variable, B bytes, ones)
//                                              │
//                                       CollectiveReduce(Add, Id) ◄═ ring ═► other tasks
//
// Each client opens a session on its own task (grpc://), builds one graph
// whose nodes are all on that task's CPU, and runs a callable whose target is
// the CollectiveReduce (nothing is fetched: only the all-reduce moves bytes).
// All N clients step concurrently: a check step (fetches the result, which
// must be N everywhere), warm-up steps, then K timed steps back to back; an
// iteration's time is the slowest client's, the figure the median over K.
// algbw = B / time, busbw = algbw * 2 (N - 1) / N (GB = 1e9 bytes), as in
// nccl-tests. The same binary also times an empty step (a NoOp target on each
// task, all N concurrently): the step overhead included in every figure.
// Then the in-step rows (impl=tensorgrid_in_step): R all-reduces chained in
// one step (each reduces the previous one's result, as a training step runs
// one per gradient pack), timed the same way and divided by R. There the
// step's overhead is spread over R all-reduces, as gloo's and MPI's loops of
// back-to-back calls have none; R is 20 up to 64 KiB, 10 up to 1 MiB, 4 up to
// 16 MiB, else 2.
//
// Then the same rows again with each task's client in the task's own
// process (impl=tensorgrid_own_client, tensorgrid_own_client_in_step and
// its empty step), as a MultiWorkerMirrored worker steps its own server:
// there a step reaches the master with no socket (the bulk port's
// in-process calls); every task reports its per-step times to this process,
// which takes the slowest per iteration as above.
//
// The tasks run distributed::Server exactly as tg_server does (default
// ConfigProto), forked from this binary before it starts any thread, on
// loopback ports picked free just before; every cluster is started up front
// and stopped after its rows. A watchdog ends the run (and, through
// PR_SET_PDEATHSIG, the children) after --timeout_s.
//
//   allreduce_benchmark [--ranks=2,4] [--sizes=4096,262144,4194304,67108864] [--timeout_s=900]
//   allreduce_benchmark --tasks=10.231.7.1:2222,10.231.7.2:2222 [--sizes=...]
//
// --tasks measures a cluster that is already running instead (tg_server
// tasks /job:worker/task:0..N-1 at those addresses, in that order; this is
// how bench/run_netns.sh measures tasks on network-namespace hosts).
//
// Output, one result a line, in bench/allreduce_peer.py's format:
//   allreduce impl=tensorgrid n=2 bytes=4096 iterations=200 median_us=...
//       algbw_GBps=... busbw_GBps=...      (on the same line)
//   step impl=tensorgrid n=2 kind=empty iterations=200 median_us=...
//   allreduce impl=tensorgrid_in_step n=2 bytes=4096 chained=20 ...
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/child_process.h"
#include "client/ops/collective_ops.h"
#include "client/ops/standard_ops.h"
#include "client/scope.h"
#include "core/platform/free_port.h"
#include "core/public/session.h"
#include "distributed/cluster_spec.h"
#include "distributed/server.h"

namespace tensorgrid {
namespace {

using bench::AwaitReady;
using bench::CheckOk;
using bench::Child;
using bench::Die;
using bench::Report;
using bench::Spawn;
using bench::StopChildren;

constexpr std::chrono::seconds kStartupTimeout(30);
// Every step and every collective is bounded: a missing member fails the run.
constexpr int64_t kStepTimeoutMs = 120'000;
constexpr int kCollectiveTimeoutSeconds = 60;

// (warm-up, timed) steps for a size; bench/allreduce_peer.py uses the same.
std::pair<int, int> Iterations(int64_t bytes) {
  if (bytes <= (64 << 10)) return {20, 200};
  if (bytes <= (1 << 20)) return {10, 50};
  if (bytes <= (16 << 20)) return {3, 20};
  return {2, 9};
}

// All-reduces chained in one step of the in-step rows.
int Chained(int64_t bytes) {
  if (bytes <= (64 << 10)) return 20;
  if (bytes <= (1 << 20)) return 10;
  if (bytes <= (16 << 20)) return 4;
  return 2;
}

// ---- the clusters ---------------------------------------------------------------

// Task `index` of `cluster`'s worker job, as tg_server runs it; `work`, when
// given, runs in this process once the task serves. Serves until
// StopChildren.
void ServeTask(const ClusterSpec& cluster, int index, int report_fd, const sigset_t& signals,
               const std::function<void(Server& server)>& work = nullptr) {
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Create(cluster, "worker", index, ConfigProto());
  absl::Status status = server.ok() ? (*server)->Start() : server.status();
  if (!status.ok()) {
    Report(report_fd, "error " + status.ToString());
    _exit(1);
  }
  Report(report_fd, "ready " + (*server)->address());
  if (work) work(**server);
  // (After `work`, a peer may still be taking this task's last chunks.)
  int signal = 0;
  sigwait(&signals, &signal);
  (*server)->Stop();
}

// N worker tasks on loopback ports picked free. Another program could take a
// port before its task binds it; the run then fails naming the task (run it
// again).
ClusterSpec LoopbackCluster(int n) {
  const std::vector<int> ports = FreePorts(n);
  if (ports.empty()) Die(absl::StrCat("cannot pick ", n, " free loopback ports"));
  std::vector<std::string> addresses;
  for (int port : ports) addresses.push_back(absl::StrCat("localhost:", port));
  absl::StatusOr<ClusterSpec> cluster =
      ClusterSpec::FromFlag("worker=" + absl::StrJoin(addresses, ","));
  CheckOk(cluster.status(), "cluster");
  return *std::move(cluster);
}

// N worker tasks, each a child process. Call while this process has one thread.
std::vector<Child> StartCluster(int n) {
  const ClusterSpec cluster = LoopbackCluster(n);
  std::vector<Child> children;
  for (int i = 0; i < n; ++i) {
    children.push_back(
        Spawn(absl::StrCat(TaskName("worker", i), " of ", n),
              [&](int fd, const sigset_t& signals) { ServeTask(cluster, i, fd, signals); }));
  }
  const auto deadline = std::chrono::steady_clock::now() + kStartupTimeout;
  for (Child& child : children) AwaitReady(child, deadline);
  return children;
}

// ---- one client per task --------------------------------------------------------

// A session on task `rank`'s own server with the benchmark graph for `bytes`:
// a ones Variable, its CollectiveReduce over `n` tasks, and a NoOp.
struct Client {
  std::unique_ptr<Session> session;
  Session::CallableHandle reduce, check, empty, chain, check_chain;
};

Client OpenClient(const std::string& address, int rank, int n, int64_t bytes, int instance_key) {
  Scope root = Scope::NewRootScope();
  Scope cpu = root.WithDevice(absl::StrCat("/job:worker/replica:0/task:", rank, "/device:CPU:0"));
  const int64_t count = bytes / static_cast<int64_t>(sizeof(float));
  // Variables outlive sessions on a server: one name per size.
  const std::string v_name = absl::StrCat("v", bytes);
  auto v = ops::Variable(cpu.WithOpName(v_name), {count}, DT_FLOAT);
  ops::Assign(cpu.WithOpName(v_name + "/init"), v,
              ops::Fill(cpu.WithOpName("ones"),
                        ops::Const(cpu, {static_cast<int32_t>(count)}, TensorShape({1})),
                        ops::Const(cpu, 1.f)));
  ops::CollectiveReduce(cpu.WithOpName("sum"), ops::Identity(cpu.WithOpName("read"), v), n,
                        /*group_key=*/1, instance_key, "Add", "Id", kCollectiveTimeoutSeconds);
  ops::NoOp(cpu.WithOpName("empty"));
  // The in-step rows: Chained(bytes) all-reduces in a row, each of the one
  // before's result (ones -> n -> n^2 ...), instance keys of their own.
  Output chained = ops::Identity(cpu.WithOpName("chain_in"), v);
  for (int k = 0; k < Chained(bytes); ++k) {
    chained = ops::CollectiveReduce(cpu.WithOpName(absl::StrCat("chain_", k)), chained, n,
                                    /*group_key=*/1, 1000 * instance_key + k, "Add", "Id",
                                    kCollectiveTimeoutSeconds);
  }
  GraphDef graph;
  CheckOk(root.ToGraphDef(&graph), "building the graph");

  const std::string where = absl::StrCat(" on task ", rank, " of ", n);
  Client client;
  SessionOptions options;
  options.target = "grpc://" + address;
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options);
  CheckOk(session.status(), "NewSession" + where);
  client.session = std::move(session).value();
  CheckOk(client.session->Create(graph), "Create" + where);
  CheckOk(client.session->Run({}, {}, {v_name + "/init"}, nullptr),
          "initializing " + v_name + where);
  auto make = [&](const std::string& fetch, const std::string& target) {
    CallableOptions callable;
    if (!fetch.empty()) callable.add_fetch(fetch);
    if (!target.empty()) callable.add_target(target);
    callable.mutable_run_options()->set_timeout_in_ms(kStepTimeoutMs);
    absl::StatusOr<Session::CallableHandle> handle = client.session->MakeCallable(callable);
    CheckOk(handle.status(), "MakeCallable" + where);
    return *handle;
  };
  client.reduce = make("", "sum");
  client.check = make("sum:0", "");
  client.empty = make("", "empty");
  const std::string last = absl::StrCat("chain_", Chained(bytes) - 1);
  client.chain = make("", last);
  client.check_chain = make(last + ":0", "");
  return client;
}

// Runs `step(rank)` on N threads at once and waits for all of them.
void OnEveryClient(int n, const std::function<void(int rank)>& step) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) threads.emplace_back(step, rank);
  for (std::thread& t : threads) t.join();
}

// `warm_up` untimed then `k` timed runs of `handle` on `c` (task `rank` of
// `n`): each timed run's seconds.
std::vector<double> StepTimes(Client& c, Session::CallableHandle Client::*handle, int warm_up,
                              int k, const std::string& what, int rank, int n) {
  std::vector<double> seconds(k);
  std::vector<Tensor> out;
  for (int i = 0; i < warm_up + k; ++i) {
    const auto start = std::chrono::steady_clock::now();
    CheckOk(c.session->RunCallable(c.*handle, {}, &out, nullptr),
            absl::StrCat(what, ", step ", i, " on task ", rank, " of ", n));
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    if (i >= warm_up) seconds[i - warm_up] = took.count();
  }
  return seconds;
}

// The median over iterations of the slowest rank's time (`seconds[rank][i]`).
double SlowestMedian(const std::vector<std::vector<double>>& seconds) {
  const size_t k = seconds.at(0).size();
  std::vector<double> slowest(k, 0.0);
  for (const std::vector<double>& rank : seconds) {
    for (size_t i = 0; i < k; ++i) slowest[i] = std::max(slowest[i], rank.at(i));
  }
  std::sort(slowest.begin(), slowest.end());
  return k % 2 ? slowest[k / 2] : (slowest[k / 2 - 1] + slowest[k / 2]) / 2;
}

// StepTimes on every client at once; SlowestMedian of them, in seconds.
double MedianStepSeconds(std::vector<Client>& clients, Session::CallableHandle Client::*handle,
                         int warm_up, int k, const std::string& what) {
  const int n = static_cast<int>(clients.size());
  std::vector<std::vector<double>> seconds(n);
  OnEveryClient(n, [&](int rank) {
    seconds[rank] = StepTimes(clients[rank], handle, warm_up, k, what, rank, n);
  });
  return SlowestMedian(seconds);
}

// One step of `check` on `c` (task `rank` of `n`): every element of its
// fetch must be `expected`.
void CheckSum(Client& c, Session::CallableHandle Client::*check, float expected,
              const std::string& what, int rank, int n) {
  std::vector<Tensor> out;
  CheckOk(c.session->RunCallable(c.*check, {}, &out, nullptr),
          absl::StrCat("check step of ", what, " on task ", rank, " of ", n));
  const float* sum = out.at(0).data<float>();
  for (int64_t i = 0; i < out[0].NumElements(); ++i) {
    if (sum[i] != expected) {
      Die(absl::StrCat(what, " over ", n, " tasks: element ", i, " on task ", rank, " is ", sum[i],
                       ", not ", expected));
    }
  }
}

// CheckSum on every client at once.
void CheckSums(std::vector<Client>& clients, Session::CallableHandle Client::*check, float expected,
               const std::string& what) {
  const int n = static_cast<int>(clients.size());
  OnEveryClient(n, [&](int rank) { CheckSum(clients[rank], check, expected, what, rank, n); });
}

void PrintRows(const std::string& impl, int n, int64_t bytes, int k, double empty, double t,
               double per, int chained) {
  if (empty >= 0) {
    std::printf("step impl=%s n=%d kind=empty iterations=%d median_us=%.1f\n", impl.c_str(), n, k,
                empty * 1e6);
  }
  const double algbw = static_cast<double>(bytes) / t / 1e9;
  std::printf(
      "allreduce impl=%s n=%d bytes=%lld iterations=%d median_us=%.1f "
      "algbw_GBps=%.4f busbw_GBps=%.4f\n",
      impl.c_str(), n, static_cast<long long>(bytes), k, t * 1e6, algbw, algbw * 2 * (n - 1) / n);
  const double chained_algbw = static_cast<double>(bytes) / per / 1e9;
  std::printf(
      "allreduce impl=%s_in_step n=%d bytes=%lld chained=%d iterations=%d "
      "median_us=%.1f algbw_GBps=%.4f busbw_GBps=%.4f\n",
      impl.c_str(), n, static_cast<long long>(bytes), chained, k, per * 1e6, chained_algbw,
      chained_algbw * 2 * (n - 1) / n);
  std::fflush(stdout);
}

void MeasureCluster(const std::vector<std::string>& tasks, const std::vector<int64_t>& sizes) {
  const int n = static_cast<int>(tasks.size());
  for (size_t s = 0; s < sizes.size(); ++s) {
    const int64_t bytes = sizes[s];
    std::vector<Client> clients(n);
    OnEveryClient(n, [&](int rank) {
      clients[rank] = OpenClient(tasks[rank], rank, n, bytes, static_cast<int>(s) + 1);
    });
    const std::string what = absl::StrCat("all-reduce of ", bytes, " bytes");
    CheckSums(clients, &Client::check, static_cast<float>(n), what);
    // n^R: a power of two for n = 2 and 4, exact in float.
    const int chained = Chained(bytes);
    CheckSums(clients, &Client::check_chain, std::pow(static_cast<float>(n), chained),
              absl::StrCat(chained, " chained ", what));
    const auto [warm_up, k] = Iterations(bytes);
    const double empty =
        s == 0 ? MedianStepSeconds(clients, &Client::empty, warm_up, k, "empty step") : -1;
    const double t = MedianStepSeconds(clients, &Client::reduce, warm_up, k, "all-reduce");
    const double per =
        MedianStepSeconds(clients, &Client::chain, warm_up, k, "chained all-reduces") / chained;
    PrintRows("tensorgrid", n, bytes, k, empty, t, per, chained);
  }
}

// ---- each task's client in its own process --------------------------------------

// The client of task `index` (of `n`) as a MultiWorkerMirrored worker runs
// it: in the task's own process, stepping `server` (no socket between them:
// the bulk port's in-process calls). Waits for a byte on `go_fd`, then for
// each size checks the sums and reports "times KIND s1 s2 ..." (KIND empty,
// only for the first size, then reduce and chain) for its K timed steps.
void RunOwnClient(Server& server, int index, int n, const std::vector<int64_t>& sizes, int go_fd,
                  int report_fd) {
  char go;
  if (read(go_fd, &go, 1) != 1) _exit(0);  // the parent went away
  auto report = [&](const std::string& kind, const std::vector<double>& seconds) {
    Report(report_fd, absl::StrCat("times ", kind, " ", absl::StrJoin(seconds, " ")));
  };
  for (size_t s = 0; s < sizes.size(); ++s) {
    const int64_t bytes = sizes[s];
    Client client = OpenClient(server.address(), index, n, bytes, static_cast<int>(s) + 1);
    const std::string what = absl::StrCat("all-reduce of ", bytes, " bytes");
    CheckSum(client, &Client::check, static_cast<float>(n), what, index, n);
    const int chained = Chained(bytes);
    CheckSum(client, &Client::check_chain, std::pow(static_cast<float>(n), chained),
             absl::StrCat(chained, " chained ", what), index, n);
    const auto [warm_up, k] = Iterations(bytes);
    if (s == 0) {
      report("empty", StepTimes(client, &Client::empty, warm_up, k, "empty step", index, n));
    }
    report("reduce", StepTimes(client, &Client::reduce, warm_up, k, "all-reduce", index, n));
    report("chain", StepTimes(client, &Client::chain, warm_up, k, "chained all-reduces", index, n));
  }
}

// N tasks, each a child process with its own client, waiting for
// MeasureOwnClients. Call while this process has one thread.
struct OwnClientCluster {
  std::vector<Child> children;
  std::vector<int> go_fds;  // a byte to each starts its client
};
OwnClientCluster StartOwnClientCluster(int n, const std::vector<int64_t>& sizes) {
  const ClusterSpec cluster = LoopbackCluster(n);
  OwnClientCluster out;
  for (int i = 0; i < n; ++i) {
    int go[2];
    if (pipe2(go, O_CLOEXEC) != 0) Die("pipe2 failed");
    out.children.push_back(Spawn(absl::StrCat(TaskName("worker", i), " of ", n, " (own client)"),
                                 [&](int fd, const sigset_t& signals) {
                                   close(go[1]);
                                   ServeTask(cluster, i, fd, signals, [&](Server& server) {
                                     RunOwnClient(server, i, n, sizes, go[0], fd);
                                   });
                                 }));
    close(go[0]);
    out.go_fds.push_back(go[1]);
  }
  const auto deadline = std::chrono::steady_clock::now() + kStartupTimeout;
  for (Child& child : out.children) AwaitReady(child, deadline);
  return out;
}

// Starts every task's own client and prints its rows
// (impl=tensorgrid_own_client, as MeasureCluster's).
void MeasureOwnClients(OwnClientCluster& cluster, const std::vector<int64_t>& sizes) {
  const int n = static_cast<int>(cluster.children.size());
  for (int fd : cluster.go_fds) {
    if (write(fd, "g", 1) != 1) Die("cannot start a task's client");
  }
  // Each line comes within a step's bound times the steps of a row.
  auto times = [&](const std::string& kind, int k) {
    std::vector<std::vector<double>> seconds;
    for (Child& child : cluster.children) {
      const std::string line =
          bench::ReadLine(child, std::chrono::steady_clock::now() + std::chrono::seconds(600));
      const std::vector<std::string> fields = absl::StrSplit(line, ' ');
      if (fields.size() != static_cast<size_t>(k) + 2 || fields[0] != "times" ||
          fields[1] != kind) {
        Die(absl::StrCat(child.name, ": expected ", k, " ", kind, " times, got: ", line));
      }
      std::vector<double> row(k);
      for (int i = 0; i < k; ++i) {
        if (!absl::SimpleAtod(fields[i + 2], &row[i])) Die(child.name + ": bad time in " + line);
      }
      seconds.push_back(std::move(row));
    }
    return SlowestMedian(seconds);
  };
  for (size_t s = 0; s < sizes.size(); ++s) {
    const int64_t bytes = sizes[s];
    const auto [warm_up, k] = Iterations(bytes);
    const double empty = s == 0 ? times("empty", k) : -1;
    const double t = times("reduce", k);
    const double per = times("chain", k) / Chained(bytes);
    PrintRows("tensorgrid_own_client", n, bytes, k, empty, t, per, Chained(bytes));
  }
}

std::vector<int64_t> ParseList(const std::string& flag, const std::string& value) {
  std::vector<int64_t> out;
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    int64_t x = 0;
    if (!absl::SimpleAtoi(part, &x) || x <= 0) Die(absl::StrCat("bad ", flag, ": ", value));
    out.push_back(x);
  }
  return out;
}

}  // namespace
}  // namespace tensorgrid

int main(int argc, char** argv) {
  using namespace tensorgrid;
  std::vector<int64_t> ranks = {2, 4};
  std::vector<int64_t> sizes = {4096, 256 << 10, 4 << 20, 64 << 20};
  int64_t timeout_s = 900;
  std::vector<std::string> external;  // --tasks
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string flag = arg.substr(0, eq), value = eq == arg.npos ? "" : arg.substr(eq + 1);
    if (flag == "--ranks") {
      ranks = ParseList(flag, value);
    } else if (flag == "--sizes") {
      sizes = ParseList(flag, value);
    } else if (flag == "--timeout_s") {
      timeout_s = ParseList(flag, value).at(0);
    } else if (flag == "--tasks") {
      external = absl::StrSplit(value, ',', absl::SkipEmpty());
      if (external.size() < 2) Die("--tasks needs at least two addresses: " + value);
    } else {
      Die("unknown flag " + arg +
          " (--ranks=2,4 --sizes=BYTES,... --timeout_s=900 --tasks=H:P,H:P,...)");
    }
  }
  // Every cluster starts now, while this process has a single thread.
  std::vector<std::vector<bench::Child>> clusters;
  std::vector<OwnClientCluster> own_clusters;
  if (external.empty()) {
    for (int64_t n : ranks) clusters.push_back(StartCluster(static_cast<int>(n)));
    for (int64_t n : ranks)
      own_clusters.push_back(StartOwnClientCluster(static_cast<int>(n), sizes));
  }
  std::thread([timeout_s] {
    std::this_thread::sleep_for(std::chrono::seconds(timeout_s));
    Die(absl::StrCat("not done in ", timeout_s, " s (--timeout_s)"));
  }).detach();
  if (!external.empty()) {
    std::fprintf(stderr, "allreduce_benchmark: %zu running tasks ...\n", external.size());
    MeasureCluster(external, sizes);
    return 0;
  }
  for (std::vector<bench::Child>& cluster : clusters) {
    std::fprintf(stderr, "allreduce_benchmark: %zu tasks ...\n", cluster.size());
    std::vector<std::string> addresses;
    for (const bench::Child& task : cluster) addresses.push_back(task.address);
    MeasureCluster(addresses, sizes);
    StopChildren(cluster);
  }
  for (OwnClientCluster& cluster : own_clusters) {
    std::fprintf(stderr, "allreduce_benchmark: %zu tasks, each with its own client ...\n",
                 cluster.children.size());
    MeasureOwnClients(cluster, sizes);
    StopChildren(cluster.children);
  }
  return 0;
}
