// A between-graph cluster that ends by itself. TensorFlow's ps task calls
// server.join() and never returns, so a job launched as processes (tg_launch
// --task_binary, Slurm, a shell script) never finishes; the classic programs
// fix it with done queues, and this is that fix as a library call. Ps task k
// holds a FIFO queue "done_queue_<k>"; a worker that is done enqueues one
// token into every ps task's queue; a ps task stops serving once it has a
// token from every worker, or when it gets SIGTERM or SIGINT.
//
//   TG_ASSIGN_OR_RETURN(TfConfig config, TfConfig::FromEnvironment());
//   if (config.task.job == "ps") return training::ServeUntilWorkersDone(config);
//   TG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, training::StartTaskServer(config));
//   std::vector<Operation> done = training::WorkerDoneOps(root, config);  // in its graph
//   ... train ...
//   TG_RETURN_IF_ERROR(session.Run({}, {}, done, nullptr));
//   server->Stop();
//
// The done tokens travel like any step: TG_AUTH_TOKEN_FILE and the TG_TLS_*
// files (ServerOptions::security) guard them too.
#ifndef TENSORGRID_CLIENT_TRAINING_CLUSTER_TASK_H_
#define TENSORGRID_CLIENT_TRAINING_CLUSTER_TASK_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/output.h"
#include "client/scope.h"
#include "distributed/cluster_spec.h"
#include "distributed/server.h"

namespace tensorgrid {
namespace training {

// Creates and starts `config.task`'s server with `options` (by default the
// security of TG_AUTH_TOKEN_FILE and TG_TLS_*), says "TASK serving at
// ADDRESS" on stderr and, as tg_server does for tg_launch --task_binary,
// "tg_server ready TASK ADDRESS" on stdout.
absl::StatusOr<std::unique_ptr<Server>> StartTaskServer(const TfConfig& config);
absl::StatusOr<std::unique_ptr<Server>> StartTaskServer(const TfConfig& config,
                                                        const ServerOptions& options);

// The worker `config.task`'s "I am done": one enqueue op per ps task of the
// cluster, built in `root` (each on its ps task, whatever `root`'s devices).
// InvalidArgument, recorded on `root`, when the task is not a worker or the
// cluster has no ps job.
std::vector<Operation> WorkerDoneOps(const Scope& root, const TfConfig& config);

struct ServeUntilDoneOptions {
  ServerOptions server;  // as given (the one-argument call reads the environment)
  // How often the wait looks for SIGTERM/SIGINT.
  absl::Duration poll = absl::Seconds(5);
};

// A ps task's life, `config.task`'s: blocks SIGTERM and SIGINT in the calling
// thread (and so in every thread the server starts), starts its server
// (StartTaskServer), serves until every worker's token is in its queue,
// prints "TASK: all N workers are done, stopping", and stops the server.
// SIGTERM or SIGINT ends the wait too: "TASK: Terminated before every worker
// was done, stopping" on stderr, and OK, a graceful stop as tg_server's.
// Other errors are returned. Call it before the process starts other threads
// (or with the signals blocked in them), so that the signals reach it.
absl::Status ServeUntilWorkersDone(const TfConfig& config);
absl::Status ServeUntilWorkersDone(const TfConfig& config, const ServeUntilDoneOptions& options);

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_CLUSTER_TASK_H_
