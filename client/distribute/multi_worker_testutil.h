// Test helpers for the multi-worker strategies: a TF_CONFIG, the workers of
// a MultiWorkerMirrored cluster started in threads of the test's process,
// each training the linear model of strategy_testutil.h, and a cluster of
// ps and worker servers for ParameterServerStrategy.
#ifndef TENSORGRID_CLIENT_DISTRIBUTE_MULTI_WORKER_TESTUTIL_H_
#define TENSORGRID_CLIENT_DISTRIBUTE_MULTI_WORKER_TESTUTIL_H_

#include <string>
#include <thread>
#include <vector>

#include "client/distribute/multi_worker_mirrored_strategy.h"
#include "client/distribute/strategy_testutil.h"
#include "core/platform/free_port.h"
#include "distributed/server.h"
#include "distributed/server_testutil.h"

namespace tensorgrid {
namespace distribute {

// Worker `index` of a cluster of "worker" tasks at `addresses`.
inline TfConfig WorkerConfig(const std::vector<std::string>& addresses, int index) {
  absl::StatusOr<ClusterSpec> cluster = ClusterSpec::FromMap({{"worker", addresses}});
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  TfConfig config;
  if (cluster.ok()) config.cluster = *cluster;
  config.task = {"worker", index};
  return config;
}

// What one worker of TrainWorkers saw.
struct WorkerRun {
  absl::StatusOr<Trained> trained = absl::UnknownError("the worker did not run");
  std::vector<std::string> replica_devices;
  int num_replicas_in_sync = 0;
  bool is_chief = false;
};

// Starts `n` workers of one cluster (on free loopback ports, picked again
// when a worker's server cannot bind one), then trains the linear model
// under each one, each in a thread with `options` and its own TF_CONFIG,
// one step at a time for `epochs` (Train, stepwise; traced with `trace`).
// Returns when every worker has finished.
inline std::vector<WorkerRun> TrainWorkers(int n, MultiWorkerMirroredStrategy::Options options,
                                           int epochs, bool trace = false) {
  std::vector<WorkerRun> runs(n);
  std::vector<std::unique_ptr<MultiWorkerMirroredStrategy>> strategies(n);
  const absl::Status created =
      WithFreeLoopbackAddresses(n, [&](const std::vector<std::string>& addresses) {
        for (auto& strategy : strategies) strategy.reset();  // a failed attempt's servers stop
        for (int i = 0; i < n; ++i) {
          MultiWorkerMirroredStrategy::Options mine = options;
          mine.tf_config = WorkerConfig(addresses, i);
          TG_ASSIGN_OR_RETURN(strategies[i], MultiWorkerMirroredStrategy::Create(mine));
        }
        return absl::OkStatus();
      });
  if (!created.ok()) {
    for (WorkerRun& run : runs) run.trained = created;
    return runs;
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      MultiWorkerMirroredStrategy& strategy = *strategies[i];
      runs[i].replica_devices = strategy.replica_devices();
      runs[i].num_replicas_in_sync = strategy.num_replicas_in_sync();
      runs[i].is_chief = strategy.is_chief();
      runs[i].trained =
          Train(strategy, epochs, /*adam=*/false, strategy.target(), /*stepwise=*/true, trace);
    });
  }
  for (std::thread& t : threads) t.join();
  return runs;
}

// `ps` ps tasks and `workers` worker tasks, each a Server started in this
// process on a free loopback port; stopped when this is destroyed.
class LocalCluster {
 public:
  static absl::StatusOr<std::unique_ptr<LocalCluster>> Start(int ps, int workers) {
    std::unique_ptr<LocalCluster> cluster;
    // Fresh addresses when a port was taken before its server bound it; a
    // failed attempt's servers stop with its cluster.
    TG_RETURN_IF_ERROR(
        WithFreeLoopbackAddresses(ps + workers, [&](const std::vector<std::string>& a) {
          cluster = std::unique_ptr<LocalCluster>(new LocalCluster);
          TG_ASSIGN_OR_RETURN(cluster->spec_,
                              ClusterSpec::FromMap({{"ps", {a.begin(), a.begin() + ps}},
                                                    {"worker", {a.begin() + ps, a.end()}}}));
          for (const auto& [job, count] :
               {std::pair<const char*, int>{"ps", ps}, {"worker", workers}}) {
            for (int i = 0; i < count; ++i) {
              TG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server,
                                  TryStartServer(cluster->spec_, job, i));
              cluster->servers_.push_back(std::move(server));
            }
          }
          return absl::OkStatus();
        }));
    return cluster;
  }
  ~LocalCluster() {
    for (auto& server : servers_) server->Stop();
  }
  const ClusterSpec& spec() const { return spec_; }

 private:
  LocalCluster() = default;
  ClusterSpec spec_;
  std::vector<std::unique_ptr<Server>> servers_;
};

}  // namespace distribute
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_DISTRIBUTE_MULTI_WORKER_TESTUTIL_H_
