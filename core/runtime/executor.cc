#include "core/runtime/executor.h"

#include <atomic>
#include <cstring>

#include "absl/container/inlined_vector.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/device_context.h"
#include "core/platform/blocking.h"
#include "core/platform/logging.h"
#include "core/platform/status.h"

namespace tensorgrid {

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(Device* device,
                                                           std::unique_ptr<const Graph> graph) {
  std::unique_ptr<Executor> exec(new Executor(device, std::move(graph)));
  TG_RETURN_IF_ERROR(exec->Initialize());
  return exec;
}

Executor::~Executor() = default;

absl::Status Executor::Initialize() {
  TG_RETURN_IF_ERROR(TopologicalSort(*graph_).status());
  device_allocator_ = device_->GetAllocator(DEVICE_MEMORY);
  items_.resize(graph_->num_node_ids());
  initial_pending_.assign(graph_->num_node_ids(), 0);
  for (Node* n : graph_->nodes()) {
    NodeItem& item = items_[n->id()];
    item.node = n;
    if (n->op_def() == nullptr) {
      return errors::Unimplemented(n->NotRegisteredMessage());
    }
    TG_ASSIGN_OR_RETURN(item.kernel,
                        KernelRegistry::Global()->CreateKernel(device_, n->def(), *n->op_def(),
                                                               graph_->versions().producer()));
    item.expensive = item.kernel->IsExpensive();
    item.is_async = item.kernel->AsAsync() != nullptr;
    item.input_start = total_inputs_;
    item.num_inputs = n->num_inputs();
    total_inputs_ += item.num_inputs;
    initial_pending_[n->id()] = static_cast<int32_t>(n->in_edges().size());
    item.ref_input.resize(item.num_inputs);
    for (int i = 0; i < item.num_inputs; ++i) item.ref_input[i] = IsRefType(n->input_type(i));
    if (initial_pending_[n->id()] == 0) roots_.push_back(n->id());
  }
  for (Node* n : graph_->nodes()) {
    NodeItem& item = items_[n->id()];
    std::vector<int> uses(n->num_outputs(), 0);
    for (const Edge* e : n->out_edges()) {
      if (!e->IsControlEdge()) ++uses[e->src_output];
    }
    for (const Edge* e : n->out_edges()) {
      OutEdge out;
      out.dst = e->dst->id();
      out.src_output = e->src_output;
      out.dst_slot = e->IsControlEdge() ? -1 : items_[out.dst].input_start + e->dst_input;
      out.last_use = !e->IsControlEdge() && --uses[e->src_output] == 0;
      out.sole_input = e->dst->in_edges().size() == 1;
      item.out_edges.push_back(out);
    }
  }
  return absl::OkStatus();
}

// The state of one step. Deletes itself after calling `done`.
class ExecutorState {
 public:
  ExecutorState(const Executor* exec, const Executor::Args& args, Executor::DoneCallback done)
      : exec_(exec),
        args_(args),
        done_(std::move(done)),
        slots_(new TensorValue[exec->total_inputs_]),
        pending_(new std::atomic<int32_t>[exec->items_.size()]) {
    static_assert(sizeof(std::atomic<int32_t>) == sizeof(int32_t));
    std::memcpy(static_cast<void*>(pending_.get()), exec->initial_pending_.data(),
                exec->initial_pending_.size() * sizeof(int32_t));
  }

  void Start() {
    const std::vector<int>& roots = exec_->roots_;
    if (roots.empty()) {
      Finish();
      return;
    }
    outstanding_.store(static_cast<int64_t>(roots.size()), std::memory_order_relaxed);
    ReadyList ready(roots.begin(), roots.end());
    ScheduleReady(ready, /*inline_queue=*/nullptr);
  }

 private:
  using ReadyList = absl::InlinedVector<int, 8>;
  using Item = Executor::NodeItem;

  // Runs `id` and then, on this thread, whatever becomes ready and is cheap.
  void Process(int id) {
    ReadyList queue{id};
    ReadyList ready;
    while (!queue.empty()) {
      const int current = queue.back();
      queue.pop_back();
      const Item& item = exec_->items_[current];
      ready.clear();
      if (!aborted_.load(std::memory_order_relaxed)) {
        if (item.is_async) {
          RunAsyncNode(item);
          continue;  // completion continues in the kernel's callback
        }
        RunNode(item, &ready);
      }
      ClearInputs(item);
      if (CompleteNode(ready)) return;
      ScheduleReady(ready, &queue);
    }
  }

  absl::Status PrepareInputs(const Item& item) {
    TensorValue* in = &slots_[item.input_start];
    for (int i = 0; i < item.num_inputs; ++i) {
      if (item.ref_input[i]) {
        if (in[i].ref == nullptr)
          return errors::Internal("input ", i, " is not a variable reference");
        continue;
      }
      if (in[i].ref != nullptr) {
        Var& var = *in[i].ref;
        absl::MutexLock lock(&var.mu);
        if (!var.initialized) {
          return errors::FailedPrecondition("attempting to use uninitialized variable '",
                                            var.name(), "'");
        }
        in[i].tensor = var.tensor;
        in[i].ref.reset();
      }
      // Each input where the kernel wants it: a tensor from another device
      // (or from host memory, for a device-memory argument) is copied here.
      Tensor& t = in[i].tensor;
      Allocator* device_memory = exec_->device_allocator_;
      const MemoryType want =
          device_memory == nullptr ? HOST_MEMORY : item.kernel->input_memory_type(i);
      if (want == HOST_MEMORY ? !t.OnHost() : t.allocator() != device_memory) {
        TG_ASSIGN_OR_RETURN(t, EnsureMemory(t, want, device_memory));
      }
    }
    return absl::OkStatus();
  }

  void FillParams(const Item& item, OpKernelContext::Params* params) {
    params->device = exec_->device_;
    params->kernel = item.kernel.get();
    params->step_id = args_.step_id;
    params->inputs = &slots_[item.input_start];
    params->call_frame = args_.call_frame;
    params->cancellation = args_.cancellation;
    params->rendezvous = args_.rendezvous;
    params->collective = args_.collective;
  }

  void RunNode(const Item& item, ReadyList* ready) {
    std::unique_ptr<NodeExecStats> stats = StartStats(item);
    absl::Status s = PrepareInputs(item);
    if (s.ok() && args_.cancellation != nullptr && args_.cancellation->IsCancelled()) {
      s = errors::Cancelled("step ", args_.step_id, " was cancelled");
    }
    if (s.ok()) {
      OpKernelContext::Params params;
      FillParams(item, &params);
      OpKernelContext ctx(params);
      s = item.kernel->Compute(ctx);
      if (stats != nullptr) FinishStats(item, ctx.outputs(), stats.get());
      if (s.ok()) s = Propagate(item, ctx.outputs(), ready);
    } else if (stats != nullptr) {
      absl::InlinedVector<TensorValue, 2> none;
      FinishStats(item, none, stats.get());
    }
    if (!s.ok()) Abort(item, s);
  }

  std::unique_ptr<NodeExecStats> StartStats(const Item& item) {
    if (args_.stats == nullptr) return nullptr;
    auto stats = std::make_unique<NodeExecStats>();
    stats->set_node_name(item.node->name());
    const int64_t now = NowNanos();
    stats->set_all_start_nanos(now);
    stats->set_all_start_micros(now / 1000);
    stats->set_thread_id(CurrentThreadId());
    return stats;
  }

  // Records end time and outputs. Transfers say how many bytes moved and
  // between which devices; a _Recv's duration is the time it waited.
  void FinishStats(const Item& item, const absl::InlinedVector<TensorValue, 2>& outputs,
                   NodeExecStats* stats) {
    const int64_t rel = NowNanos() - stats->all_start_nanos();
    stats->set_op_end_rel_nanos(rel);
    stats->set_all_end_rel_nanos(rel);
    stats->set_op_end_rel_micros(rel / 1000);
    stats->set_all_end_rel_micros(rel / 1000);
    RecordOutputs(outputs, stats);
    if (Allocator* a = exec_->device_allocator_; a != nullptr) {
      const AllocatorStats s = a->GetStats();
      AllocatorMemoryUsed* used = stats->add_memory();
      used->set_allocator_name(a->Name());
      used->set_peak_bytes(s.peak_bytes_in_use);
      used->set_allocator_bytes_in_use(s.bytes_in_use);
    }
    const Node& n = *item.node;
    std::string label = absl::StrCat(n.name(), " = ", n.op());
    if (n.op() == "_Send" || n.op() == "_Recv") {
      const Tensor& t = n.op() == "_Send" ? slots_[item.input_start].tensor
                                          : (outputs.empty() ? Tensor() : outputs[0].tensor);
      std::string peer, tensor_name;
      GetNodeAttr(n.def(), n.op() == "_Send" ? "recv_device" : "send_device", &peer).IgnoreError();
      GetNodeAttr(n.def(), "tensor_name", &tensor_name).IgnoreError();
      absl::StrAppend(&label, " ", t.TotalBytes(), " bytes ", n.op() == "_Send" ? "to " : "from ",
                      peer, " (", tensor_name, ")");
    }
    stats->set_timeline_label(std::move(label));
    args_.stats->Save(std::move(*stats));
  }

  // Async kernels keep their context alive until `done`; completion then
  // continues the step from the calling thread (or the pool).
  void RunAsyncNode(const Item& item) {
    absl::Status s = PrepareInputs(item);
    if (!s.ok()) {
      Abort(item, s);
      ClearInputs(item);
      ReadyList none;
      CompleteNode(none);
      return;
    }
    struct AsyncState {
      OpKernelContext::Params params;
      std::unique_ptr<OpKernelContext> ctx;
      std::unique_ptr<NodeExecStats> stats;
    };
    auto* state = new AsyncState;
    state->stats = StartStats(item);
    FillParams(item, &state->params);
    state->ctx = std::make_unique<OpKernelContext>(state->params);
    item.kernel->AsAsync()->ComputeAsync(*state->ctx, [this, &item, state](absl::Status s) {
      ReadyList ready;
      if (state->stats != nullptr) FinishStats(item, state->ctx->outputs(), state->stats.get());
      if (s.ok()) s = Propagate(item, state->ctx->outputs(), &ready);
      if (!s.ok()) Abort(item, s);
      delete state;
      ClearInputs(item);
      if (CompleteNode(ready)) return;
      ContinueAfterAsync(ready);
    });
  }

  // After an async kernel's callback: successors continue on the pool, so
  // that the callback returns promptly, except one async successor, which
  // starts here. An async kernel returns promptly by contract, and starting
  // it here saves a thread hand-off on the way of chained transfers (a
  // collective after a collective sends its request at once). Nested starts
  // (kernels that complete inside ComputeAsync) are bounded.
  void ContinueAfterAsync(const ReadyList& ready) {
    static thread_local int nested = 0;
    constexpr int kMaxNested = 4;
    int here = -1;
    for (int id : ready) {
      if (here < 0 && nested < kMaxNested && exec_->items_[id].is_async) {
        here = id;
      } else {
        Dispatch(id);
      }
    }
    if (here < 0) return;
    // Last: the step may end (and this state go) inside Process.
    ++nested;
    Process(here);
    --nested;
  }

  absl::Status Propagate(const Item& item, absl::InlinedVector<TensorValue, 2>& outputs,
                         ReadyList* ready) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i].tensor.IsInitialized() && outputs[i].ref == nullptr) {
        return errors::Internal("kernel did not produce output ", i);
      }
    }
    for (const Executor::OutEdge& e : item.out_edges) {
      if (e.dst_slot >= 0) {
        TensorValue& out = outputs[e.src_output];
        if (e.last_use) {
          slots_[e.dst_slot] = std::move(out);
        } else {
          slots_[e.dst_slot] = out;
        }
      }
      // A node with a single in-edge is ready now; no need to touch its count.
      if (e.sole_input || pending_[e.dst].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        ready->push_back(e.dst);
      }
    }
    return absl::OkStatus();
  }

  static void RecordOutputs(const absl::InlinedVector<TensorValue, 2>& outputs,
                            NodeExecStats* stats) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Tensor& t = outputs[i].tensor;
      if (!t.IsInitialized()) continue;
      NodeOutput* out = stats->add_output();
      out->set_slot(static_cast<int>(i));
      TensorDescription* d = out->mutable_tensor_description();
      d->set_dtype(t.dtype());
      t.shape().AsProto(d->mutable_shape());
      AllocationDescription* a = d->mutable_allocation_description();
      a->set_requested_bytes(static_cast<int64_t>(t.TotalBytes()));
      a->set_allocator_name(t.allocator() == nullptr ? "cpu" : t.allocator()->Name());
    }
  }

  void ClearInputs(const Item& item) {
    TensorValue* in = &slots_[item.input_start];
    for (int i = 0; i < item.num_inputs; ++i) in[i] = TensorValue();
  }

  void Abort(const Item& item, const absl::Status& s) {
    // The first failure wins; Finish reads status_ only after every node has
    // completed, which the outstanding count's acq_rel ordering makes visible.
    if (!aborted_.exchange(true, std::memory_order_acq_rel)) {
      status_ =
          WithContext(s, absl::StrCat("node '", item.node->name(), "' (", item.node->op(), ")"));
      // The step is over: wake what waits inside it (a dequeue, a receive),
      // or it would hold the step open with the error unreported. Safe to
      // re-enter from here: this node still counts as outstanding, so the
      // step cannot finish under us.
      if (args_.cancellation != nullptr) args_.cancellation->StartCancel();
    }
  }

  // Accounts for one finished node and its newly ready successors. Returns
  // true if that finished the step (and `this` is gone).
  bool CompleteNode(const ReadyList& ready) {
    if (ready.empty()) {
      if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        Finish();
        return true;
      }
      return false;
    }
    if (ready.size() > 1) {
      outstanding_.fetch_add(static_cast<int64_t>(ready.size()) - 1, std::memory_order_relaxed);
    }
    return false;
  }

  // Cheap nodes go to `inline_queue`; expensive ones to the pool, except one
  // kept inline when there is no other inline work. With no inline queue
  // (step start), everything but one node is dispatched.
  void ScheduleReady(const ReadyList& ready, ReadyList* inline_queue) {
    if (ready.empty()) return;
    ThreadPool* pool = args_.inter_op_pool;
    if (inline_queue == nullptr) {
      for (size_t i = 0; i + 1 < ready.size(); ++i) Dispatch(ready[i]);
      Process(ready.back());
      return;
    }
    int keep_expensive = -1;
    for (int id : ready) {
      if (pool == nullptr || !exec_->items_[id].expensive) {
        inline_queue->push_back(id);
      } else if (keep_expensive < 0) {
        keep_expensive = id;
      } else {
        Dispatch(id);
      }
    }
    if (keep_expensive >= 0) {
      if (inline_queue->empty()) {
        inline_queue->push_back(keep_expensive);
      } else {
        Dispatch(keep_expensive);
      }
    }
  }

  void Dispatch(int id) {
    if (args_.inter_op_pool == nullptr) {
      Process(id);
    } else {
      args_.inter_op_pool->Schedule([this, id] { Process(id); });
    }
  }

  void Finish() {
    absl::Status s = std::move(status_);
    // A device with its own memory ran the step asynchronously: the step is
    // over when that work is, and its errors are the step's.
    if (exec_->device_allocator_ != nullptr) {
      absl::Status synced = exec_->device_->Sync();
      if (s.ok()) s = std::move(synced);
    }
    Executor::DoneCallback done = std::move(done_);
    delete this;
    done(std::move(s));
  }

  const Executor* const exec_;
  const Executor::Args args_;
  Executor::DoneCallback done_;
  std::unique_ptr<TensorValue[]> slots_;
  std::unique_ptr<std::atomic<int32_t>[]> pending_;
  std::atomic<int64_t> outstanding_{0};
  std::atomic<bool> aborted_{false};
  absl::Status status_;  // written once, by the Abort that sets aborted_
};

void Executor::RunAsync(const Args& args, DoneCallback done) {
  (new ExecutorState(this, args, std::move(done)))->Start();
}

absl::Status Executor::Run(const Args& args) {
  return WaitForCallback([&](StatusCallback done) { RunAsync(args, std::move(done)); });
}

}  // namespace tensorgrid
