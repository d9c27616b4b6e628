// Step latency of an in-process Session: the whole local path (master feed
// checks, worker lookup, executor step, fetch) for tiny graphs, so the time
// is almost all runtime overhead.
//
//   1 node:   x (fed float scalar) -> Identity -> fetch
//   const:    Const (float scalar) -> fetch
//   10 nodes: x (fed) -> y0 = Identity(x) -> y1 = AddV2(y0, x) -> ... -> y9 = AddV2(y8, x) -> fetch
//
// Each graph runs through Session::Run (feed and fetch names, a cache lookup
// per step) and through RunCallable (no lookups); the callable steps once more
// with Abseil's mutex deadlock detection off. For reference only,
// TensorFlow 1.x's session.run of a trivial graph costs about 90 us from
// Python; that figure is not measured here.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "core/framework/attr_value_util.h"
#include "core/public/session.h"

namespace tensorgrid {
namespace {

// Benchmarks cannot go on after a failed setup step.
void CheckOk(const absl::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "setup failed: %s\n", s.ToString().c_str());
    std::abort();
  }
}

NodeDef MakeNode(const std::string& name, const std::string& op, std::vector<std::string> inputs) {
  NodeDef n;
  n.set_name(name);
  n.set_op(op);
  for (auto& i : inputs) n.add_input(std::move(i));
  return n;
}

NodeDef ScalarPlaceholder(const std::string& name) {
  NodeDef x = MakeNode(name, "Placeholder", {});
  SetAttr(&x, "dtype", DT_FLOAT);
  SetAttr(&x, "shape", PartialTensorShape({}));
  return x;
}

// x -> Identity "y".
GraphDef IdentityGraph() {
  GraphDef g;
  *g.add_node() = ScalarPlaceholder("x");
  NodeDef y = MakeNode("y", "Identity", {"x"});
  SetAttr(&y, "T", DT_FLOAT);
  *g.add_node() = y;
  return g;
}

// Const "y" = 1.0f.
GraphDef ConstGraph() {
  GraphDef g;
  NodeDef c = MakeNode("y", "Const", {});
  SetAttr(&c, "dtype", DT_FLOAT);
  SetAttr(&c, "value", Tensor::Scalar<float>(1.0f));
  *g.add_node() = c;
  return g;
}

// x -> Identity y0 -> AddV2 y1 .. y9 (each adds x to its predecessor); fetch "y".
GraphDef ChainGraph(int length) {
  GraphDef g;
  *g.add_node() = ScalarPlaceholder("x");
  std::string prev = "x";
  for (int i = 0; i < length; ++i) {
    std::string name = i + 1 == length ? "y" : "y" + std::to_string(i);
    NodeDef n = i == 0 ? MakeNode(name, "Identity", {prev}) : MakeNode(name, "AddV2", {prev, "x"});
    SetAttr(&n, "T", DT_FLOAT);
    *g.add_node() = n;
    prev = name;
  }
  return g;
}

std::unique_ptr<Session> CreateSession(const GraphDef& graph) {
  SessionOptions options;
  // Match the machine: two inter-op threads (the default is 5).
  options.config.set_inter_op_parallelism_threads(2);
  options.config.set_intra_op_parallelism_threads(1);
  auto session = NewSession(options);
  CheckOk(session.status());
  CheckOk((*session)->Create(graph));
  return std::move(session).value();
}

void RunSteps(benchmark::State& state, const GraphDef& graph, bool fed) {
  auto session = CreateSession(graph);
  std::vector<std::pair<std::string, Tensor>> feeds;
  if (fed) feeds.emplace_back("x", Tensor::Scalar<float>(1.0f));
  const std::vector<std::string> fetches = {"y:0"};
  std::vector<Tensor> out;
  absl::Status s = session->Run(feeds, fetches, {}, &out);  // builds and caches the step
  CheckOk(s);
  for (auto _ : state) {
    s = session->Run(feeds, fetches, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(out.data());
  }
}

void RunCallableSteps(benchmark::State& state, const GraphDef& graph, bool fed) {
  auto session = CreateSession(graph);
  CallableOptions options;
  std::vector<Tensor> feeds;
  if (fed) {
    options.add_feed("x");
    feeds.push_back(Tensor::Scalar<float>(1.0f));
  }
  options.add_fetch("y:0");
  auto handle = session->MakeCallable(options);
  CheckOk(handle.status());
  std::vector<Tensor> out;
  CheckOk(session->RunCallable(*handle, feeds, &out, nullptr));  // warm-up
  for (auto _ : state) {
    absl::Status s = session->RunCallable(*handle, feeds, &out, nullptr);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(out.data());
  }
}

void BM_SessionRun_Identity1(benchmark::State& state) { RunSteps(state, IdentityGraph(), true); }
void BM_RunCallable_Identity1(benchmark::State& state) {
  RunCallableSteps(state, IdentityGraph(), true);
}
void BM_SessionRun_Const1(benchmark::State& state) { RunSteps(state, ConstGraph(), false); }
void BM_RunCallable_Const1(benchmark::State& state) {
  RunCallableSteps(state, ConstGraph(), false);
}
void BM_SessionRun_Chain10(benchmark::State& state) { RunSteps(state, ChainGraph(10), true); }
void BM_RunCallable_Chain10(benchmark::State& state) {
  RunCallableSteps(state, ChainGraph(10), true);
}
// Steps hand work to pool threads, so wall time is what counts.
#define TG_STEP_BENCHMARK(fn)         \
  BENCHMARK(fn)                       \
      ->UseRealTime()                 \
      ->Unit(benchmark::kMicrosecond) \
      ->Repetitions(9)                \
      ->ReportAggregatesOnly(true)

TG_STEP_BENCHMARK(BM_SessionRun_Identity1);
TG_STEP_BENCHMARK(BM_RunCallable_Identity1);
TG_STEP_BENCHMARK(BM_SessionRun_Const1);
TG_STEP_BENCHMARK(BM_RunCallable_Const1);
TG_STEP_BENCHMARK(BM_SessionRun_Chain10);
TG_STEP_BENCHMARK(BM_RunCallable_Chain10);

}  // namespace
}  // namespace tensorgrid

BENCHMARK_MAIN();
