// Test helpers shared by the strategy tests: a small linear-regression
// model trained under any strategy.
#ifndef TENSORGRID_CLIENT_DISTRIBUTE_STRATEGY_TESTUTIL_H_
#define TENSORGRID_CLIENT_DISTRIBUTE_STRATEGY_TESTUTIL_H_

#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "client/distribute/strategy.h"
#include "client/ops/standard_ops.h"
#include "client/training/global_step.h"
#include "client/training/optimizer.h"
#include "client/training/variables.h"
#include "core/platform/status.h"
#include "core/public/session.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace distribute {

// 8 rows of the migration guide's linear-regression data (y = 0.2 x0 + 0.1 roughly).
inline Dataset Data(int64_t global_batch) {
  Tensor x(DT_FLOAT, TensorShape({8, 2}));
  Tensor y(DT_FLOAT, TensorShape({8, 1}));
  for (int i = 0; i < 8; ++i) {
    x.data<float>()[2 * i] = 1.0f + i;
    x.data<float>()[2 * i + 1] = 1.5f + i;
    y.data<float>()[i] = 0.3f + 0.2f * i;
  }
  return Dataset::FromTensorSlices({x, y}).Batch(global_batch);
}

struct Trained {
  std::vector<std::vector<Tensor>> w;  // per component
  Tensor b;
  int64_t global_step = 0;
  std::vector<double> losses;
  // With `stepwise`: w and b (their first copy) after every step.
  std::vector<std::string> per_step;
  // With `trace`: the device each node of one more, traced, training step
  // ran on (after the values above were read).
  std::map<std::string, std::string> placement;
};

// A session over `root`'s graph with the strategy's config, on `target`.
inline absl::StatusOr<std::unique_ptr<Session>> SessionFor(const Scope& root,
                                                           const Strategy& strategy,
                                                           const std::string& target = "") {
  GraphDef graph;
  TG_RETURN_IF_ERROR(root.ToGraphDef(&graph));
  SessionOptions options;
  options.target = target;
  options.config = strategy.session_config();
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  TG_RETURN_IF_ERROR(session->Create(graph));
  return session;
}

// Trains the linear model for `epochs` passes over Data(4) under `strategy`
// with Fit, or (`stepwise`) one step at a time, recording the variables;
// with `trace`, also where one more step's nodes ran.
inline absl::StatusOr<Trained> Train(Strategy& strategy, int epochs, bool adam = false,
                                     const std::string& target = "", bool stepwise = false,
                                     bool trace = false) {
  Scope root = Scope::NewRootScope();
  Scope scope = strategy.scope(root);
  training::Variable w(scope, "w", {2, 1}, DT_FLOAT, training::GlorotUniform(7));
  training::Variable b(scope, "b", {1}, DT_FLOAT, training::Zeros());
  training::Variable step = training::GetOrCreateGlobalStep(scope);
  std::unique_ptr<training::Optimizer> opt;
  if (adam) {
    opt = std::make_unique<training::AdamOptimizer>(0.01);
  } else {
    opt = std::make_unique<training::AdagradOptimizer>(0.05);
  }
  TG_ASSIGN_OR_RETURN(DistributedDataset data,
                      strategy.ExperimentalDistributeDataset(scope, Data(4)));
  TG_ASSIGN_OR_RETURN(
      DistributedStep run,
      strategy.Run(
          scope,
          [&](ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
            const Scope& s = ctx.scope();
            Output pred = ops::Add(s, ops::MatMul(s, ctx.inputs()[0], w), b);
            Output loss = ops::Mean(s, ops::Square(s, ops::Sub(s, pred, ctx.inputs()[1])), {0, 1});
            TG_RETURN_IF_ERROR(ctx.Minimize(opt.get(), loss, {}, step));
            return std::vector<Output>{loss};
          },
          data.inputs()));
  Output loss = strategy.Reduce(scope, ReduceOp::kMean, run.outputs[0]);
  Operation init = training::GlobalVariablesInitializer(root);
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, SessionFor(root, strategy, target));
  TG_RETURN_IF_ERROR(session->Run({}, {}, {init.name()}, nullptr));
  std::ostringstream log;
  Trained t;
  if (stepwise) {
    for (int e = 0; e < epochs; ++e) {
      TG_ASSIGN_OR_RETURN(std::unique_ptr<DistributedDataset::Iterator> it, data.MakeIterator());
      FeedList feeds;
      std::vector<Tensor> out;
      for (bool end = false;;) {
        TG_RETURN_IF_ERROR(it->GetNextFeeds(&feeds, &end));
        if (end) break;
        TG_RETURN_IF_ERROR(session->Run(feeds, {loss.name()}, {run.train_op.name()}, &out));
        t.losses.push_back(out[0].scalar<float>());
        TG_RETURN_IF_ERROR(session->Run({}, {w.value().name(), b.value().name()}, {}, &out));
        t.per_step.push_back(out[0].DebugString(100) + " " + out[1].DebugString(100));
      }
    }
  } else {
    FitOptions fit;
    fit.epochs = epochs;
    fit.log = &log;
    TG_ASSIGN_OR_RETURN(FitHistory history, Fit(session.get(), data, run.train_op, loss, fit));
    t.losses = history.loss;
    if (log.str().find("epoch 1/") == std::string::npos) {
      return absl::InternalError("Fit printed no progress line: " + log.str());
    }
  }
  std::vector<training::Variable> ws = w.components();
  if (ws.empty()) ws = {w};
  std::vector<std::string> fetch;
  for (const auto& c : ws) fetch.push_back(c.value().name());
  fetch.push_back(b.value().name());
  fetch.push_back(step.value().name());
  std::vector<Tensor> out;
  TG_RETURN_IF_ERROR(session->Run({}, fetch, {}, &out));
  for (size_t i = 0; i < ws.size(); ++i) t.w.push_back({out[i]});
  t.b = out[ws.size()];
  t.global_step = out.back().scalar<int64_t>();
  if (trace) {
    TG_ASSIGN_OR_RETURN(std::unique_ptr<DistributedDataset::Iterator> it, data.MakeIterator());
    FeedList feeds;
    bool end = false;
    TG_RETURN_IF_ERROR(it->GetNextFeeds(&feeds, &end));
    RunOptions options;
    options.set_trace_level(RunOptions::FULL_TRACE);
    RunMetadata metadata;
    TG_RETURN_IF_ERROR(
        session->Run(options, feeds, {loss.name()}, {run.train_op.name()}, &out, &metadata));
    for (const auto& dev : metadata.step_stats().dev_stats()) {
      for (const auto& node : dev.node_stats()) t.placement[node.node_name()] = dev.device();
    }
  }
  return t;
}

// The devices the nodes named `op_name` (in any name scope) ran on, in
// the step Train traced.
inline std::set<std::string> DevicesRanOn(const Trained& t, const std::string& op_name) {
  std::set<std::string> devices;
  for (const auto& [node, device] : t.placement) {
    if (node == op_name || absl::EndsWith(node, "/" + op_name)) devices.insert(device);
  }
  return devices;
}

inline void ExpectNear(const Tensor& a, const Tensor& b, float tol) {
  ASSERT_EQ(a.NumElements(), b.NumElements());
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], tol) << "element " << i;
  }
}

}  // namespace distribute
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_DISTRIBUTE_STRATEGY_TESTUTIL_H_
