// Test helpers shared by the MonitoredTrainingSession, hook and sync-replica
// tests: a model whose every step counts, a scratch directory per test, and
// a started Server.
#ifndef TENSORGRID_CLIENT_TRAINING_MONITORED_SESSION_TESTUTIL_H_
#define TENSORGRID_CLIENT_TRAINING_MONITORED_SESSION_TESTUTIL_H_

#include <sys/stat.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/ops/standard_ops.h"
#include "client/training/global_step.h"
#include "client/training/monitored_session.h"
#include "client/training/variables.h"
#include "core/platform/status_testutil.h"
#include "distributed/cluster_spec.h"
#include "distributed/server.h"
#include "distributed/server_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace training {

// The global step and a float `w`, both on `variable_device`; `train` (on
// `train_device`) adds one to each.
struct CountingModel {
  explicit CountingModel(const std::string& variable_device = "",
                         const std::string& train_device = "") {
    const Scope vars = root.WithDevice(variable_device);
    step = GetOrCreateGlobalStep(vars);
    w = Variable(vars, "w", {}, DT_FLOAT, Zeros());
    auto inc_w = ops::AssignAdd(vars, w.handle(), 1.f);
    auto inc_step = ops::AssignAdd(vars, step.handle(), int64_t{1});
    train = ops::NoOp(root.WithDevice(train_device)
                          .WithOpName("train")
                          .WithControlDependencies({inc_w.operation, inc_step.operation}))
                .operation;
  }
  Scope root = Scope::NewRootScope();
  Variable step, w;
  Operation train;
};

// (global step, w) read through the session.
inline std::pair<int64_t, float> Values(MonitoredTrainingSession& session,
                                        const CountingModel& model) {
  std::vector<Tensor> out;
  EXPECT_OK(session.Run({}, {model.step.value(), model.w.value()}, {}, &out));
  if (out.size() != 2) return {-1, -1};
  return {out[0].scalar<int64_t>(), out[1].scalar<float>()};
}

// A directory under TEST_TMPDIR named after the running test.
inline std::string TestDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir =
      absl::StrCat(tmp == nullptr ? "/tmp" : tmp, "/",
                   testing::UnitTest::GetInstance()->current_test_info()->name());
  mkdir(dir.c_str(), 0755);
  return dir;
}

// The started server of task `index` of `job`, or null (with a test failure).
inline std::unique_ptr<Server> StartServer(const ClusterSpec& cluster, const std::string& job,
                                           int index) {
  absl::StatusOr<std::unique_ptr<Server>> server = TryStartServer(cluster, job, index);
  EXPECT_OK(server.status());
  return server.ok() ? *std::move(server) : nullptr;
}

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_MONITORED_SESSION_TESTUTIL_H_
