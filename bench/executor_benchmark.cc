// Executor overhead per node, against oneTBB's flow graph on the same shapes.
//
//   chain:   n0 -> n1 -> ... -> n99999          (100,000 NoOps, control edges)
//
//   fan:            source
//                 /   |    \   control edges
//               w0   w1 ... w9999               (10,000 NoOps)
//                 \   |    /
//                    sink
//
// tensorgrid runs each shape through Executor::Run, with a 2-thread inter-op
// pool and with none (everything inline). TBB runs the same shapes as
// continue_node<continue_msg> graphs in a task arena of 2 threads and of 1.
// Graphs are built once; each iteration is one step (one try_put + wait).
// The counter node_time is wall time per node (seconds; "25ns" = 25 ns/node).
#include <benchmark/benchmark.h>
#include <tbb/flow_graph.h>
#include <tbb/task_arena.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/framework/device.h"
#include "core/graph/graph.h"
#include "core/platform/env.h"
#include "core/runtime/executor.h"

namespace tensorgrid {
namespace {

constexpr int kChainLength = 100000;
constexpr int kFanWidth = 10000;

void CheckOk(const absl::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "setup failed: %s\n", s.ToString().c_str());
    std::abort();
  }
}

void SetNodeTime(benchmark::State& state, int nodes) {
  state.counters["node_time"] =
      benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
  state.counters["nodes"] = nodes;
}

// ---- tensorgrid ------------------------------------------------------------

Node* AddNoOp(Graph& graph, const std::string& name) {
  NodeDef def;
  def.set_name(name);
  def.set_op("NoOp");
  auto node = graph.AddNode(std::move(def));
  CheckOk(node.status());
  return *node;
}

std::unique_ptr<Graph> ChainGraph(int length) {
  auto graph = std::make_unique<Graph>();
  Node* prev = AddNoOp(*graph, "n0");
  for (int i = 1; i < length; ++i) {
    Node* n = AddNoOp(*graph, "n" + std::to_string(i));
    graph->AddControlEdge(prev, n);
    prev = n;
  }
  return graph;
}

std::unique_ptr<Graph> FanGraph(int width) {
  auto graph = std::make_unique<Graph>();
  Node* source = AddNoOp(*graph, "source");
  Node* sink = AddNoOp(*graph, "sink");
  for (int i = 0; i < width; ++i) {
    Node* w = AddNoOp(*graph, "w" + std::to_string(i));
    graph->AddControlEdge(source, w);
    graph->AddControlEdge(w, sink);
  }
  return graph;
}

void RunExecutor(benchmark::State& state, std::unique_ptr<Graph> graph, int pool_threads) {
  static const std::unique_ptr<Device> device =
      NewCpuDevice("/job:localhost/replica:0/task:0/device:CPU:0", 1);
  const int nodes = graph->num_nodes();
  auto executor = Executor::Create(device.get(), std::move(graph));
  CheckOk(executor.status());
  std::unique_ptr<ThreadPool> pool;
  if (pool_threads > 0) pool = std::make_unique<ThreadPool>(pool_threads);
  CallFrame frame;
  Executor::Args args;
  args.call_frame = &frame;
  args.inter_op_pool = pool.get();
  CheckOk((*executor)->Run(args));  // warm-up
  for (auto _ : state) {
    args.step_id++;
    absl::Status s = (*executor)->Run(args);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  SetNodeTime(state, nodes);
}

void BM_Executor_Chain(benchmark::State& state) {
  RunExecutor(state, ChainGraph(kChainLength), static_cast<int>(state.range(0)));
}
void BM_Executor_Fan(benchmark::State& state) {
  RunExecutor(state, FanGraph(kFanWidth), static_cast<int>(state.range(0)));
}

// ---- oneTBB flow graph -----------------------------------------------------

using tbb::flow::continue_msg;
using ContinueNode = tbb::flow::continue_node<continue_msg>;

continue_msg NoWork(const continue_msg&) { return continue_msg(); }

// A flow graph bound to its own arena of `threads` threads (1: the caller only).
struct TbbGraph {
  explicit TbbGraph(int threads) : arena(threads, /*reserved_for_masters=*/1) {
    arena.execute([&] { graph = std::make_unique<tbb::flow::graph>(); });
  }
  ~TbbGraph() {
    arena.execute([&] {
      nodes.clear();
      broadcast.reset();
      graph.reset();
    });
  }
  ContinueNode& Add() {
    nodes.push_back(std::make_unique<ContinueNode>(*graph, NoWork));
    return *nodes.back();
  }

  tbb::task_arena arena;
  std::unique_ptr<tbb::flow::graph> graph;
  std::unique_ptr<tbb::flow::broadcast_node<continue_msg>> broadcast;  // fan only
  std::vector<std::unique_ptr<ContinueNode>> nodes;
};

void BM_Tbb_Chain(benchmark::State& state) {
  TbbGraph tbb_graph(static_cast<int>(state.range(0)));
  tbb_graph.arena.execute([&] {
    ContinueNode* prev = &tbb_graph.Add();
    for (int i = 1; i < kChainLength; ++i) {
      ContinueNode& n = tbb_graph.Add();
      tbb::flow::make_edge(*prev, n);
      prev = &n;
    }
  });
  ContinueNode& head = *tbb_graph.nodes.front();
  auto step = [&] {
    tbb_graph.arena.execute([&] {
      head.try_put(continue_msg());
      tbb_graph.graph->wait_for_all();
    });
  };
  step();  // warm-up
  for (auto _ : state) step();
  SetNodeTime(state, kChainLength);
}

void BM_Tbb_Fan(benchmark::State& state) {
  TbbGraph tbb_graph(static_cast<int>(state.range(0)));
  tbb_graph.arena.execute([&] {
    tbb_graph.broadcast =
        std::make_unique<tbb::flow::broadcast_node<continue_msg>>(*tbb_graph.graph);
    ContinueNode& sink = tbb_graph.Add();  // make_edge counts its 10,000 predecessors
    for (int i = 0; i < kFanWidth; ++i) {
      ContinueNode& w = tbb_graph.Add();
      tbb::flow::make_edge(*tbb_graph.broadcast, w);
      tbb::flow::make_edge(w, sink);
    }
  });
  auto step = [&] {
    tbb_graph.arena.execute([&] {
      tbb_graph.broadcast->try_put(continue_msg());
      tbb_graph.graph->wait_for_all();
    });
  };
  step();  // warm-up
  for (auto _ : state) step();
  SetNodeTime(state, kFanWidth + 2);
}

// Arg: inter-op pool threads (0: no pool) for the executor, arena threads for TBB.
BENCHMARK(BM_Executor_Chain)
    ->ArgName("pool")
    ->Arg(2)
    ->Arg(0)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(9)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_Executor_Fan)
    ->ArgName("pool")
    ->Arg(2)
    ->Arg(0)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(9)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_Tbb_Chain)
    ->ArgName("threads")
    ->Arg(2)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(9)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_Tbb_Fan)
    ->ArgName("threads")
    ->Arg(2)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(9)
    ->ReportAggregatesOnly(true);

}  // namespace
}  // namespace tensorgrid

BENCHMARK_MAIN();
