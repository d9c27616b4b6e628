#include "client/training/cluster_task.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/client_session.h"
#include "client/ops/data_flow_ops.h"
#include "client/ops/standard_ops.h"
#include "core/platform/status.h"
#include "distributed/rpc_security.h"

namespace tensorgrid {
namespace training {

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
absl::Status WaitForWorkers(const TfConfig& config, const Server& server, const sigset_t& signals,
                            absl::Duration poll) {
  const int workers = config.cluster.num_tasks("worker");
  Scope root = Scope::NewRootScope();
  auto all_done = ops::QueueDequeueMany(root.WithDevice(config.task.name()),
                                        DoneQueue(root, config.task.index), workers, {DT_INT32});
  SessionOptions options;
  options.target = server.target();
  options.config.add_device_filters(config.task.name());
  ClientSession session(root, options);
  RunOptions wait;
  wait.set_timeout_in_ms(absl::ToInt64Milliseconds(poll));
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
  std::fflush(stdout);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> StartTaskServer(const TfConfig& config) {
  ServerOptions options;
  TG_ASSIGN_OR_RETURN(options.security, RpcSecurity::FromEnvironment());
  return StartTaskServer(config, options);
}

absl::StatusOr<std::unique_ptr<Server>> StartTaskServer(const TfConfig& config,
                                                        const ServerOptions& options) {
  TG_ASSIGN_OR_RETURN(
      std::unique_ptr<Server> server,
      Server::Create(config.cluster, config.task.job, config.task.index, ConfigProto(), options));
  TG_RETURN_IF_ERROR(server->Start());
  std::fprintf(stderr, "%s serving at %s\n", config.task.name().c_str(), server->address().c_str());
  // tg_launch --task_binary waits for tg_server's ready line on stdout.
  std::printf("tg_server ready %s %s\n", config.task.name().c_str(), server->address().c_str());
  std::fflush(stdout);
  return server;
}

std::vector<Operation> WorkerDoneOps(const Scope& root, const TfConfig& config) {
  const int num_ps = config.cluster.num_tasks("ps");
  if (config.task.job != "worker" || num_ps == 0) {
    root.UpdateStatus(errors::InvalidArgument("WorkerDoneOps: ", config.task.name(),
                                              " is not a worker of a cluster with ps tasks (",
                                              config.cluster.ToString(), ")"));
    return {};
  }
  std::vector<Operation> done;
  for (int k = 0; k < num_ps; ++k) {
    auto on_ps = root.WithDevice(TaskName("ps", k));
    done.push_back(
        ops::QueueEnqueue(on_ps, DoneQueue(root, k), {ops::Const(on_ps, config.task.index)}));
  }
  return done;
}

absl::Status ServeUntilWorkersDone(const TfConfig& config) {
  ServeUntilDoneOptions options;
  TG_ASSIGN_OR_RETURN(options.server.security, RpcSecurity::FromEnvironment());
  return ServeUntilWorkersDone(config, options);
}

absl::Status ServeUntilWorkersDone(const TfConfig& config, const ServeUntilDoneOptions& options) {
  if (config.task.job != "ps") {
    return errors::InvalidArgument("ServeUntilWorkersDone: ", config.task.name(),
                                   " is not a ps task");
  }
  if (options.poll <= absl::ZeroDuration()) {
    return errors::InvalidArgument("ServeUntilWorkersDone: poll must be positive");
  }
  // SIGTERM/SIGINT are taken in the wait (sigtimedwait): blocked in this
  // thread and so in every thread the server starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, StartTaskServer(config, options.server));
  absl::Status s = WaitForWorkers(config, *server, signals, options.poll);
  server->Stop();
  return s;
}

}  // namespace training
}  // namespace tensorgrid
