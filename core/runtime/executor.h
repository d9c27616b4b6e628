// Executor: runs one graph's kernels on one device, step after step.
//
// Create() builds a kernel per node once; each RunAsync() is a step with its
// own flat arrays of input slots and atomic pending counts indexed by node id.
// Ready nodes whose kernels are cheap run inline on the current thread;
// expensive ones run inline while there is nothing else to do and otherwise
// go to the inter-op pool. The first failing node aborts the step: nodes not
// yet started are skipped and `done` gets that node's error, prefixed with
// "node 'x' (Op): ". Steps may run concurrently on one Executor.
#ifndef TENSORGRID_CORE_RUNTIME_EXECUTOR_H_
#define TENSORGRID_CORE_RUNTIME_EXECUTOR_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/op_kernel.h"
#include "core/graph/graph.h"
#include "core/platform/env.h"
#include "proto/step_stats.pb.h"

namespace tensorgrid {

// Collects per-node timing of one step on one device. Thread-safe.
class StepStatsCollector {
 public:
  explicit StepStatsCollector(DeviceStepStats* out) : out_(out) {}
  void Save(NodeExecStats stats) {
    absl::MutexLock lock(&mu_);
    *out_->add_node_stats() = std::move(stats);
  }

 private:
  absl::Mutex mu_;
  DeviceStepStats* out_ ABSL_GUARDED_BY(mu_);
};

class Executor {
 public:
  struct Args {
    int64_t step_id = 0;
    CallFrame* call_frame = nullptr;
    CancellationManager* cancellation = nullptr;  // may be null
    StepStatsCollector* stats = nullptr;          // null: no step stats
    ThreadPool* inter_op_pool = nullptr;          // null: everything runs inline
    Rendezvous* rendezvous = nullptr;             // the step's (multi-device steps)
    CollectiveExecutor* collective = nullptr;     // the worker's (collective ops)
  };

  // Creates a kernel for every node. Unimplemented naming op and node for an
  // unregistered op or a missing kernel; kernel constructor errors as is.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(Device* device,
                                                          std::unique_ptr<const Graph> graph);
  ~Executor();

  using DoneCallback = std::function<void(absl::Status)>;
  void RunAsync(const Args& args, DoneCallback done);
  // Runs a step and waits for it.
  absl::Status Run(const Args& args);

  const Graph& graph() const { return *graph_; }
  Device* device() const { return device_; }

 private:
  friend class ExecutorState;
  struct OutEdge {
    int dst;       // node id
    int dst_slot;  // index into the step's input slots; -1 for control edges
    int src_output;
    bool last_use;    // the last consumer of this output may take it by move
    bool sole_input;  // the edge is dst's only in-edge: dst is ready when it fires
  };
  struct NodeItem {
    const Node* node = nullptr;
    std::unique_ptr<OpKernel> kernel;
    bool expensive = true;
    bool is_async = false;
    int input_start = 0;
    int num_inputs = 0;
    std::vector<bool> ref_input;  // input i takes a variable reference
    std::vector<OutEdge> out_edges;
  };

  Executor(Device* device, std::unique_ptr<const Graph> graph)
      : device_(device), graph_(std::move(graph)) {}
  absl::Status Initialize();

  Device* const device_;
  Allocator* device_allocator_ = nullptr;  // the device's own memory; null on CPUs
  const std::unique_ptr<const Graph> graph_;
  std::vector<NodeItem> items_;  // by node id; node == null for removed ids
  std::vector<int> roots_;
  // Per node id: the number of in-edges, copied into each step's pending
  // counts in one pass (kept apart from items_ so the copy is dense).
  std::vector<int32_t> initial_pending_;
  int total_inputs_ = 0;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_EXECUTOR_H_
