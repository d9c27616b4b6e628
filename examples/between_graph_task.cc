#include "examples/between_graph_task.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "client/client_session.h"
#include "client/ops/data_flow_ops.h"
#include "client/ops/standard_ops.h"
#include "core/platform/status.h"
#include "distributed/rpc_security.h"

namespace tensorgrid {

namespace {

// Ps task `ps`'s queue: one int32 per token. Every worker's graph and the
// ps's own name the same queue, so they share it.
ops::FIFOQueue DoneQueue(const Scope& root, int ps) {
  const std::string name = absl::StrCat("done_queue_", ps);
  return ops::FIFOQueue(root.WithDevice(TaskName("ps", ps)).WithOpName(name), {DT_INT32},
                        ops::FIFOQueue::Shapes({PartialTensorShape({})}).SharedName(name));
}

// Waits, through `server`, until this task's queue holds a token from every
// worker, or until one of `signals` is pending; says which.
absl::Status WaitForWorkers(const TfConfig& config, const Server& server, const sigset_t& signals) {
  const int workers = config.cluster.num_tasks("worker");
  Scope root = Scope::NewRootScope();
  auto all_done = ops::QueueDequeueMany(root.WithDevice(config.task.name()),
                                        DoneQueue(root, config.task.index), workers, {DT_INT32});
  SessionOptions options;
  options.target = server.target();
  options.config.add_device_filters(config.task.name());
  ClientSession session(root, options);
  RunOptions wait;
  wait.set_timeout_in_ms(5000);
  std::vector<Tensor> out;
  while (true) {
    absl::Status s = session.Run(wait, {}, {all_done[0]}, {}, &out, nullptr);
    if (s.ok()) break;
    if (!absl::IsDeadlineExceeded(s)) {
      return WithContext(s, "waiting for the workers' done signals");
    }
    const timespec now = {0, 0};
    if (int signal = sigtimedwait(&signals, nullptr, &now); signal > 0) {
      std::fprintf(stderr, "%s: %s before every worker was done, stopping\n",
                   config.task.name().c_str(), strsignal(signal));
      return absl::OkStatus();  // a graceful stop, as tg_server's
    }
  }
  std::printf("%s: all %d workers are done, stopping\n", config.task.name().c_str(), workers);
  return absl::OkStatus();
}

}  // namespace

absl::Status TaskFlags::Check() const {
  const bool hosts = !ps_hosts.empty() || !worker_hosts.empty();
  if (hosts && !cluster.empty()) {
    return errors::InvalidArgument("give --cluster or --ps_hosts/--worker_hosts, not both");
  }
  if ((hosts || !cluster.empty()) && job_name.empty()) {
    return errors::InvalidArgument("give --job_name");
  }
  if (!hosts && cluster.empty() && !job_name.empty()) {
    return errors::InvalidArgument("--job_name needs --ps_hosts/--worker_hosts or --cluster");
  }
  if (job_name.empty() && std::getenv("TF_CONFIG") == nullptr) {
    return errors::InvalidArgument("give --ps_hosts/--worker_hosts or --cluster, or set TF_CONFIG");
  }
  return absl::OkStatus();
}

absl::StatusOr<TfConfig> TaskFlags::Resolve() const {
  TfConfig config;
  if (job_name.empty()) {
    TG_ASSIGN_OR_RETURN(config, TfConfig::FromEnvironment());
  } else {
    TG_ASSIGN_OR_RETURN(config.cluster, cluster.empty()
                                            ? ClusterSpec::FromHostsFlags(ps_hosts, worker_hosts)
                                            : ClusterSpec::FromFlag(cluster));
    config.task = {job_name, task_index};
  }
  if (config.cluster.num_tasks("ps") == 0 || config.cluster.num_tasks("worker") == 0) {
    return errors::InvalidArgument("the cluster needs ps and worker tasks, got ",
                                   config.cluster.ToString());
  }
  if (config.task.job != "ps" && config.task.job != "worker") {
    return errors::InvalidArgument("this task is ", config.task.name(),
                                   "; the jobs are ps and worker");
  }
  return config;
}

absl::StatusOr<std::unique_ptr<Server>> StartServer(const TfConfig& config) {
  ServerOptions server_options;
  TG_ASSIGN_OR_RETURN(server_options.security, RpcSecurity::FromEnvironment());
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server,
                      Server::Create(config.cluster, config.task.job, config.task.index,
                                     ConfigProto(), server_options));
  TG_RETURN_IF_ERROR(server->Start());
  std::fprintf(stderr, "%s serving at %s\n", config.task.name().c_str(), server->address().c_str());
  // tg_launch --task_binary waits for tg_server's ready line on stdout.
  std::printf("tg_server ready %s %s\n", config.task.name().c_str(), server->address().c_str());
  std::fflush(stdout);
  return server;
}

std::vector<Operation> SayDone(const Scope& root, int num_ps, int worker_index) {
  std::vector<Operation> say_done;
  for (int k = 0; k < num_ps; ++k) {
    auto on_ps = root.WithDevice(TaskName("ps", k));
    say_done.push_back(
        ops::QueueEnqueue(on_ps, DoneQueue(root, k), {ops::Const(on_ps, worker_index)}));
  }
  return say_done;
}

absl::Status ServeUntilWorkersDone(const TfConfig& config) {
  // SIGTERM/SIGINT are taken in the wait (sigtimedwait): blocked in every
  // thread, before the server starts any.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, StartServer(config));
  absl::Status s = WaitForWorkers(config, *server, signals);
  server->Stop();
  return s;
}

}  // namespace tensorgrid
