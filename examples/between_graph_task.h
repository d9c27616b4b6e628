// What every task of a between-graph (ps and worker) program does besides
// training, as TensorFlow's classic distributed programs do it: find out
// which task it is (--ps_hosts/--worker_hosts or --cluster, --job_name and
// --task_index, or else TF_CONFIG), start that task's server, and, for the
// ps tasks, stop once every worker is done. That last is the classic
// programs' done queues: ps task k holds a FIFO queue "done_queue_<k>"; a
// worker that is done enqueues one token into every ps task's queue, and a
// ps task stops serving once it has a token from every worker, so that the
// cluster ends by itself.
//
//   TG_RETURN_IF_ERROR(flags.Check());                 // with the other flag checks
//   TG_ASSIGN_OR_RETURN(TfConfig config, flags.Resolve());
//   if (config.task.job == "ps") return ServeUntilWorkersDone(config);
//   TG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, StartServer(config));
//   std::vector<Operation> say_done = SayDone(root, num_ps, config.task.index);  // in its graph
//   ... train ...
//   TG_RETURN_IF_ERROR(session.Run({}, {}, say_done, nullptr));
//   server->Stop();
//
// TG_AUTH_TOKEN_FILE and the TG_TLS_* files guard every task, the done
// tokens included, as for tg_server.
#ifndef TENSORGRID_EXAMPLES_BETWEEN_GRAPH_TASK_H_
#define TENSORGRID_EXAMPLES_BETWEEN_GRAPH_TASK_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/output.h"
#include "client/scope.h"
#include "distributed/cluster_spec.h"
#include "distributed/server.h"

namespace tensorgrid {

// The classic program's cluster flags; the program binds them to its Flags.
struct TaskFlags {
  std::string ps_hosts, worker_hosts;  // "H:P,...", together
  std::string cluster;                 // or "ps=H:P,...;worker=H:P,..."
  std::string job_name;                // "ps" or "worker"; empty: TF_CONFIG
  int task_index = 0;                  // the program checks that it is not negative

  // Which of them go together: InvalidArgument for --cluster and the hosts
  // flags both, either without --job_name or --job_name without them, and
  // none of them without TF_CONFIG in the environment.
  absl::Status Check() const;
  // The cluster and this task, from the flags or else TF_CONFIG.
  // InvalidArgument for a cluster without a ps or a worker job, and for a
  // task in neither.
  absl::StatusOr<TfConfig> Resolve() const;
};

// Creates and starts `config.task`'s server (TG_AUTH_TOKEN_FILE, TG_TLS_*),
// says "TASK serving at ADDRESS" on stderr and, as tg_server does for
// tg_launch --task_binary, "tg_server ready TASK ADDRESS" on stdout.
absl::StatusOr<std::unique_ptr<Server>> StartServer(const TfConfig& config);

// Worker `worker_index`'s "I am done", one enqueue op per ps task, built in
// `root` (each on its ps task, whatever `root`'s devices).
std::vector<Operation> SayDone(const Scope& root, int num_ps, int worker_index);

// A ps task's life, `config.task`'s: blocks SIGTERM and SIGINT in this
// thread and so in every thread the server starts, starts its server
// (StartServer), serves until every worker's token is in its queue, prints
// "TASK: all N workers are done, stopping", and stops the server. A wait for
// the tokens (through a session that sees only this task's devices) is
// bounded, so that SIGTERM or SIGINT ends it too: "TASK: Terminated before
// every worker was done, stopping" on stderr, and OK, a graceful stop as
// tg_server's. Other errors are returned. Call it before this process starts
// any thread.
absl::Status ServeUntilWorkersDone(const TfConfig& config);

}  // namespace tensorgrid

#endif  // TENSORGRID_EXAMPLES_BETWEEN_GRAPH_TASK_H_
