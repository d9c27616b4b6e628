// Test helpers for MultiWorkerMirroredStrategy: a TF_CONFIG, and workers of
// one cluster started in threads of the test's process, each training the
// linear model of strategy_testutil.h.
#ifndef TENSORGRID_CLIENT_DISTRIBUTE_MULTI_WORKER_TESTUTIL_H_
#define TENSORGRID_CLIENT_DISTRIBUTE_MULTI_WORKER_TESTUTIL_H_

#include <string>
#include <thread>
#include <vector>

#include "client/distribute/multi_worker_mirrored_strategy.h"
#include "client/distribute/strategy_testutil.h"
#include "core/platform/free_port.h"

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

// Starts `n` workers of one cluster (on free loopback ports), each in a
// thread with `options` and its own TF_CONFIG, and trains the linear model
// under each one step at a time for `epochs` (Train, stepwise; traced with
// `trace`). Returns when every worker has finished.
inline std::vector<WorkerRun> TrainWorkers(int n, MultiWorkerMirroredStrategy::Options options,
                                           int epochs, bool trace = false) {
  const std::vector<std::string> addresses = FreeLoopbackAddresses(n);
  std::vector<WorkerRun> runs(n);
  if (static_cast<int>(addresses.size()) != n) {
    for (WorkerRun& run : runs) run.trained = absl::UnavailableError("no free loopback ports");
    return runs;
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i, options] {
      MultiWorkerMirroredStrategy::Options mine = options;
      mine.tf_config = WorkerConfig(addresses, i);
      auto strategy = MultiWorkerMirroredStrategy::Create(mine);
      if (!strategy.ok()) {
        runs[i].trained = strategy.status();
        return;
      }
      runs[i].replica_devices = (*strategy)->replica_devices();
      runs[i].num_replicas_in_sync = (*strategy)->num_replicas_in_sync();
      runs[i].is_chief = (*strategy)->is_chief();
      runs[i].trained = Train(**strategy, epochs, /*adam=*/false, (*strategy)->target(),
                              /*stepwise=*/true, trace);
    });
  }
  for (std::thread& t : threads) t.join();
  return runs;
}

}  // namespace distribute
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_DISTRIBUTE_MULTI_WORKER_TESTUTIL_H_
