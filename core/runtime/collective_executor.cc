#include "core/runtime/collective_executor.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/framework/device_name.h"
#include "core/platform/status.h"

namespace tensorgrid {

// One transfer step of a chunk's pipeline: put this member's piece of
// `send_seg` for the next rank, then take the previous rank's piece of
// `recv_seg` and merge it (reduce) or copy it; the owner of a reduced segment
// applies final_op to it after its last merge (`finalize`).
struct RingStep {
  int wire_step = 0;  // the step in the keys (the same at both ends of a link)
  int send_seg = -1;
  int recv_seg = -1;
  bool reduce = false;
  bool finalize = false;
};

// One member's execution of one collective op.
struct CollectiveRun {
  CollectiveOpParams params;
  std::string device;
  std::string device_type;
  uint64_t incarnation = 0;
  Tensor input, output;
  absl::Time deadline;
  CancellationManager* cancellation = nullptr;
  CancellationManager::Token token = 0;
  bool registered = false;
  CollectiveExecutor::DoneCallback done;
  CollectiveBufTable* table = nullptr;
  std::function<void()> on_failure;  // forgets the resolution: the next run asks again
  std::atomic<bool> finished{false};

  // Resolution.
  int join_attempts = 0;  // CompleteGroup calls to a leader not up yet
  std::shared_ptr<const CompleteGroupResult> group;
  int rank = -1;
  int source_rank = -1;
  std::atomic<int64_t> exec_seq{-1};

  // The algorithm.
  Tensor flat;        // output as one dimension
  Tensor input_flat;  // input as one dimension (an all-reduce sends and merges from it)
  std::vector<std::pair<int64_t, int64_t>> segments;  // [begin, end) in elements
  int64_t num_chunks = 1;
  std::vector<RingStep> steps;
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> chunks_done{0};

  int size() const { return params.group_size; }
  int prev() const { return (rank + size() - 1) % size(); }
  int next() const { return (rank + 1) % size(); }
  bool failed() const { return finished.load(std::memory_order_acquire); }

  std::string What() const {
    return absl::StrCat(CollectiveTypeName(params.type), " (group ", params.group_key,
                        ", instance ", params.instance_key, ") on ", device);
  }
  // Chunk `c` of segment `s`, in elements of `flat`.
  std::pair<int64_t, int64_t> Chunk(int s, int64_t c) const {
    const auto [b, e] = segments[s];
    const int64_t len = e - b;
    return {b + len * c / num_chunks, b + len * (c + 1) / num_chunks};
  }
  std::string Key(const RingStep& step, int64_t chunk, int src, int dst) const {
    return CollectiveBufKey(params.group_key, params.instance_key, exec_seq, step.wire_step, chunk,
                            src, dst);
  }

  // The first call wins: later ones (a late chunk, a cancellation) do nothing.
  void Finish(absl::Status s) {
    if (finished.exchange(true, std::memory_order_acq_rel)) return;
    if (registered) cancellation->DeregisterCallback(token);
    if (!s.ok() && exec_seq >= 0) {
      // Wake this execution's other local waiters and drop what it left behind.
      table->Abort(CollectiveExecPrefix(params.group_key, params.instance_key, exec_seq), s);
    }
    if (!s.ok() && on_failure) on_failure();
    if (!s.ok() && s.message().find(device) == absl::string_view::npos) {
      s = WithContext(s, What());
    }
    CollectiveExecutor::DoneCallback cb = std::move(done);
    cb(std::move(s));
  }
};

namespace {

int64_t ChunkBytesFromEnv() {
  const char* env = std::getenv("TG_COLLECTIVE_CHUNK_BYTES");
  int64_t bytes = 0;
  if (env != nullptr && absl::SimpleAtoi(env, &bytes) && bytes > 0) return bytes;
  return WorkerCollectiveExecutor::kDefaultChunkBytes;
}

int64_t OneRoundBytesFromEnv() {
  const char* env = std::getenv("TG_COLLECTIVE_ONE_ROUND_BYTES");
  int64_t bytes = 0;
  if (env != nullptr && absl::SimpleAtoi(env, &bytes) && bytes >= 0) return bytes;
  return WorkerCollectiveExecutor::kDefaultOneRoundBytes;
}

// Splits [0, total) into n nearly equal ranges, the longer ones first.
std::vector<std::pair<int64_t, int64_t>> SplitEvenly(int64_t total, int n) {
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t begin = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t len = total / n + (i < total % n ? 1 : 0);
    out.emplace_back(begin, begin + len);
    begin += len;
  }
  return out;
}

template <typename T>
void MergeTyped(const std::string& op, const T* in, const T* mine, T* out, int64_t n) {
  if (op == "Add") {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] + mine[i];
  } else if (op == "Mul") {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] * mine[i];
  } else if (op == "Min") {
    for (int64_t i = 0; i < n; ++i) out[i] = std::min(in[i], mine[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = std::max(in[i], mine[i]);
  }
}

template <typename T>
void DivideTyped(T* acc, int64_t n, int by) {
  for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] / static_cast<T>(by);
}

// out[0, n) = merge_op(in, mine) elementwise (`out` may be `mine`).
void Merge(DataType dtype, const std::string& op, const void* in, const void* mine, void* out,
           int64_t n) {
  switch (dtype) {
    case DT_FLOAT:
      return MergeTyped(op, static_cast<const float*>(in), static_cast<const float*>(mine),
                        static_cast<float*>(out), n);
    case DT_DOUBLE:
      return MergeTyped(op, static_cast<const double*>(in), static_cast<const double*>(mine),
                        static_cast<double*>(out), n);
    case DT_INT32:
      return MergeTyped(op, static_cast<const int32_t*>(in), static_cast<const int32_t*>(mine),
                        static_cast<int32_t*>(out), n);
    case DT_INT64:
      return MergeTyped(op, static_cast<const int64_t*>(in), static_cast<const int64_t*>(mine),
                        static_cast<int64_t*>(out), n);
    default: return;
  }
}

void Divide(DataType dtype, void* acc, int64_t n, int by) {
  if (dtype == DT_FLOAT) DivideTyped(static_cast<float*>(acc), n, by);
  if (dtype == DT_DOUBLE) DivideTyped(static_cast<double*>(acc), n, by);
}

void CopyElements(const Tensor& from, Tensor* to, int64_t to_begin) {
  const size_t bytes = from.TotalBytes();
  if (bytes == 0) return;
  std::memcpy(static_cast<char*>(to->raw_data()) + to_begin * DataTypeSize(to->dtype()),
              from.raw_data(), bytes);
}

// The segments and per-chunk steps of rank `r` of `n` (see RingStep).
void PlanRing(CollectiveRun& run, int64_t chunk_bytes) {
  const int n = run.size(), r = run.rank;
  const int64_t total = run.flat.NumElements();
  auto mod = [n](int x) { return ((x % n) + n) % n; };
  switch (run.params.type) {
    case CollectiveType::kReduce:
      run.segments = SplitEvenly(total, n);
      for (int k = 0; k + 1 < n; ++k) {  // reduce-scatter: r ends owning segment r+1
        run.steps.push_back(RingStep{k, mod(r - k), mod(r - k - 1), true, k + 2 == n});
      }
      for (int k = 0; k + 1 < n; ++k) {  // all-gather of the owned segments, verbatim
        run.steps.push_back(RingStep{n - 1 + k, mod(r + 1 - k), mod(r - k), false, false});
      }
      break;
    case CollectiveType::kGather:
      run.segments = SplitEvenly(total, n);  // equal: every member's input has one shape
      for (int k = 0; k + 1 < n; ++k) {
        run.steps.push_back(RingStep{k, mod(r - k), mod(r - k - 1), false, false});
      }
      break;
    case CollectiveType::kBroadcast: {
      run.segments = {{0, total}};
      const int position = mod(r - run.source_rank);  // hops from the source
      if (position > 0) run.steps.push_back(RingStep{0, -1, 0, false, false});
      if (position < n - 1) run.steps.push_back(RingStep{0, 0, -1, false, false});
      break;
    }
  }
  int64_t longest = 0;
  for (const auto& [b, e] : run.segments) longest = std::max(longest, e - b);
  const int64_t elem = std::max(1, DataTypeSize(run.params.dtype));
  const int64_t chunk_elems = std::max<int64_t>(1, chunk_bytes / elem);
  run.num_chunks = std::max<int64_t>(1, (longest + chunk_elems - 1) / chunk_elems);
}

}  // namespace

WorkerCollectiveExecutor::WorkerCollectiveExecutor(Options options)
    : options_([&] {
        if (options.chunk_bytes <= 0) options.chunk_bytes = ChunkBytesFromEnv();
        if (options.one_round_bytes < 0) options.one_round_bytes = OneRoundBytesFromEnv();
        options.max_chunks_in_flight = std::max(1, options.max_chunks_in_flight);
        return std::move(options);
      }()),
      leader_task_(options_.task) {}

void WorkerCollectiveExecutor::SetLeader(std::string leader_task) {
  absl::MutexLock lock(&mu_);
  leader_task_ = std::move(leader_task);
}

WorkerInterface* WorkerCollectiveExecutor::Leader(std::string* leader_task) {
  {
    absl::MutexLock lock(&mu_);
    *leader_task = leader_task_;
  }
  return options_.peer ? options_.peer(*leader_task) : nullptr;
}

void WorkerCollectiveExecutor::ExecuteAsync(const CollectiveOpParams& params, Device* device,
                                            const Tensor& input, Tensor output,
                                            CancellationManager* cancellation, DoneCallback done) {
  auto run = std::make_shared<CollectiveRun>();
  run->params = params;
  run->device = device->name();
  run->device_type = device->device_type();
  run->incarnation = device->incarnation();
  run->input = input;
  run->output = std::move(output);
  run->deadline = absl::Now() + params.timeout;
  run->done = std::move(done);
  run->table = options_.table;
  run->on_failure = [this, device = run->device, group_key = params.group_key,
                     instance_key = params.instance_key] {
    absl::MutexLock lock(&mu_);
    groups_.erase(group_key);
    auto it = instances_.find(std::make_tuple(device, group_key, instance_key));
    if (it != instances_.end()) it->second.resolved = false;
  };
  if (cancellation != nullptr) {
    run->cancellation = cancellation;
    std::weak_ptr<CollectiveRun> weak = run;
    run->registered = cancellation->RegisterCallback(&run->token, [weak] {
      if (auto r = weak.lock()) r->Finish(errors::Cancelled("the step was cancelled"));
    });
    if (!run->registered) return run->Finish(errors::Cancelled("the step was cancelled"));
  }
  ResolveGroup(std::move(run));
}

void WorkerCollectiveExecutor::ResolveGroup(std::shared_ptr<CollectiveRun> run) {
  const CollectiveOpParams& p = run->params;
  {
    absl::MutexLock lock(&mu_);
    auto it = groups_.find(p.group_key);
    if (it != groups_.end()) {
      const auto& devices = it->second->devices;
      auto pos = std::find(devices.begin(), devices.end(), run->device);
      if (pos != devices.end() && it->second->group_size == p.group_size) {
        run->group = it->second;
        run->rank = static_cast<int>(pos - devices.begin());
      }
    }
  }
  if (run->group != nullptr) return ResolveInstance(std::move(run));
  std::string leader_task;
  WorkerInterface* leader = Leader(&leader_task);
  if (leader == nullptr) {
    return run->Finish(
        errors::Unavailable("no route to the collective group leader ", leader_task));
  }
  CompleteGroupArgs args;
  args.group_key = p.group_key;
  args.group_size = p.group_size;
  args.device_type = run->device_type;
  args.device = run->device;
  args.incarnation = run->incarnation;
  args.timeout = std::max(absl::ZeroDuration(), run->deadline - absl::Now());
  auto result = std::make_shared<CompleteGroupResult>();
  leader->CompleteGroupAsync(args, result.get(), [this, run, result, leader_task](absl::Status s) {
    if (run->failed()) return;
    if (!s.ok()) {
      if (DeviceNameUtils::IsSameAddressSpace(leader_task, options_.task)) return run->Finish(s);
      // A leader that is not up yet (tasks start in any order) is asked
      // again, 50 ms apart at first and at most 1 s, until the deadline.
      const absl::Duration pause =
          std::min(absl::Milliseconds(50) * (int64_t{1} << std::min(run->join_attempts, 5)),
                   absl::Seconds(1));
      if (absl::IsUnavailable(s) && absl::Now() + pause < run->deadline) {
        ++run->join_attempts;
        return RetryGroupLater(run, pause);
      }
      return run->Finish(WithContext(
          s, absl::StrCat("joining collective group ", run->params.group_key, " at its leader ",
                          leader_task,
                          run->join_attempts > 0
                              ? absl::StrCat(" (asked ", run->join_attempts + 1, " times)")
                              : "")));
    }
    auto pos = std::find(result->devices.begin(), result->devices.end(), run->device);
    if (result->group_size != run->params.group_size || pos == result->devices.end() ||
        static_cast<int>(result->devices.size()) != result->group_size) {
      return run->Finish(errors::Internal("the leader answered group ", run->params.group_key,
                                          " with ", result->devices.size(),
                                          " members that do not include ", run->device));
    }
    run->rank = static_cast<int>(pos - result->devices.begin());
    run->group = result;
    {
      absl::MutexLock lock(&mu_);
      groups_[run->params.group_key] = result;
    }
    ResolveInstance(run);
  });
}

void WorkerCollectiveExecutor::RetryGroupLater(std::shared_ptr<CollectiveRun> run,
                                               absl::Duration pause) {
  absl::Status s = options_.table->RunLater(absl::Now() + pause, [this, run] {
    if (!run->failed()) ResolveGroup(run);
  });
  if (!s.ok()) run->Finish(s);
}

void WorkerCollectiveExecutor::ResolveInstance(std::shared_ptr<CollectiveRun> run) {
  const CollectiveOpParams& p = run->params;
  const auto key = std::make_tuple(run->device, p.group_key, p.instance_key);
  int64_t next_seq = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = instances_.find(key);
    if (it != instances_.end() && it->second.resolved) {
      run->source_rank = it->second.source_rank;
      run->exec_seq = it->second.runs++;
    } else if (it != instances_.end()) {
      next_seq = it->second.runs;
    }
  }
  if (run->exec_seq >= 0) return StartRing(std::move(run));
  std::string leader_task;
  WorkerInterface* leader = Leader(&leader_task);
  if (leader == nullptr) {
    return run->Finish(
        errors::Unavailable("no route to the collective group leader ", leader_task));
  }
  CompleteInstanceArgs args;
  args.group_key = p.group_key;
  args.group_size = p.group_size;
  args.instance_key = p.instance_key;
  args.device = run->device;
  args.op = CollectiveTypeName(p.type);
  args.dtype = p.dtype;
  args.shape.assign(p.shape.dim_sizes().begin(), p.shape.dim_sizes().end());
  args.is_source = p.is_source;
  args.timeout = std::max(absl::ZeroDuration(), run->deadline - absl::Now());
  args.next_seq = next_seq;
  auto result = std::make_shared<CompleteInstanceResult>();
  leader->CompleteInstanceAsync(
      args, result.get(), [this, run, result, key, leader_task](absl::Status s) {
        if (run->failed()) return;
        if (!s.ok()) {
          if (!DeviceNameUtils::IsSameAddressSpace(leader_task, options_.task)) {
            s = WithContext(s,
                            absl::StrCat("starting collective instance ", run->params.instance_key,
                                         " at the group leader ", leader_task));
          }
          return run->Finish(s);
        }
        {
          absl::MutexLock lock(&mu_);
          InstanceRecord& record = instances_[key];
          record.resolved = true;
          record.source_rank = result->source_rank;
          record.runs = std::max(record.runs, result->exec_seq);
          run->source_rank = record.source_rank;
          run->exec_seq = record.runs++;
        }
        StartRing(run);
      });
}

void WorkerCollectiveExecutor::StartRing(std::shared_ptr<CollectiveRun> run) {
  if (run->failed()) return;
  run->flat = run->output.Reshaped(TensorShape({run->output.NumElements()}));
  const int n = run->size();
  switch (run->params.type) {
    case CollectiveType::kReduce:
      // No copy of the input: the first reduce-scatter step sends from it,
      // and every merge writes output = received (op) input, so each output
      // segment is written once by a merge or by an all-gather receive.
      if (n == 1) {
        CopyElements(run->input, &run->flat, 0);
        return run->Finish(absl::OkStatus());  // Div by 1 is the identity too
      }
      run->input_flat = run->input.Reshaped(TensorShape({run->input.NumElements()}));
      break;
    case CollectiveType::kGather:
      CopyElements(run->input, &run->flat, run->input.NumElements() * run->rank);
      if (n == 1) return run->Finish(absl::OkStatus());
      break;
    case CollectiveType::kBroadcast:
      if (run->rank == run->source_rank) CopyElements(run->input, &run->flat, 0);
      if (n == 1) return run->Finish(absl::OkStatus());
      break;
  }
  if (run->params.type == CollectiveType::kReduce &&
      static_cast<int64_t>(run->input.TotalBytes()) <= options_.one_round_bytes) {
    if ((n & (n - 1)) == 0) return RunDoublingRound(std::move(run), 0, Tensor());
    return RunOneRound(std::move(run));
  }
  PlanRing(*run, options_.chunk_bytes);
  const int64_t window = std::min<int64_t>(options_.max_chunks_in_flight, run->num_chunks);
  for (int64_t i = 0; i < window; ++i) {
    // Chunks finished inline take their successors from the same counter.
    const int64_t chunk = run->next_chunk.fetch_add(1);
    if (chunk >= run->num_chunks) break;
    RunChunk(run, chunk, 0);
  }
}

void WorkerCollectiveExecutor::RunChunk(std::shared_ptr<CollectiveRun> run, int64_t chunk,
                                        size_t step_index) {
  for (; step_index < run->steps.size(); ++step_index) {
    if (run->failed()) return;
    const RingStep& step = run->steps[step_index];
    if (step.send_seg >= 0) {
      // An all-reduce's first step sends this member's own input; every
      // later step sends what the step before merged or received.
      const bool from_input = step_index == 0 && run->input_flat.IsInitialized();
      const auto [b, e] = run->Chunk(step.send_seg, chunk);
      options_.table->Put(run->Key(step, chunk, run->rank, run->next()),
                          (from_input ? run->input_flat : run->flat).Slice(b, e), run->deadline);
    }
    if (step.recv_seg < 0) continue;
    const std::string key = run->Key(step, chunk, run->prev(), run->rank);
    // A chunk from another task lands in its place in the output straight
    // from the wire (or from the peer's memory). A merged one is then added
    // to this member's input there, in place: no buffer of its own, and the
    // add reads what the receive just wrote. One from this process is the
    // peer's own tensor: nothing is copied.
    Tensor into;
    const auto [b, e] = run->Chunk(step.recv_seg, chunk);
    if (!step.reduce ||
        !DeviceNameUtils::IsSameAddressSpace(run->group->devices[run->prev()], options_.task)) {
      into = run->flat.Slice(b, e);
    }
    const void* in_place = into.IsInitialized() ? into.raw_data() : nullptr;
    Receive(run, run->prev(), key, std::move(into),
            [this, run, chunk, step_index, key, in_place](absl::Status s, Tensor got) {
              if (run->failed()) return;
              if (!s.ok()) return run->Finish(s);
              const RingStep& step = run->steps[step_index];
              const auto [b, e] = run->Chunk(step.recv_seg, chunk);
              if (got.dtype() != run->params.dtype || got.NumElements() != e - b) {
                return run->Finish(
                    errors::Internal("collective chunk '", key, "' has ", got.NumElements(), " ",
                                     DataTypeString(got.dtype()), " elements, not ", e - b));
              }
              if (step.reduce) {
                // Each reduce-scatter step adds this member's input to a segment
                // it has not touched before (`got` may already lie there).
                const size_t elem = DataTypeSize(run->params.dtype);
                void* acc = static_cast<char*>(run->flat.raw_data()) + b * elem;
                const void* mine = static_cast<const char*>(run->input_flat.raw_data()) + b * elem;
                Merge(run->params.dtype, run->params.merge_op, got.raw_data(), mine, acc, e - b);
                if (step.finalize && run->params.final_op == "Div") {
                  Divide(run->params.dtype, acc, e - b, run->size());
                }
              } else if (got.raw_data() != in_place) {
                CopyElements(got, &run->flat, b);
              }
              RunChunk(run, chunk, step_index + 1);
            });
    return;  // the receive continues the pipeline
  }
  ChunkDone(std::move(run));
}

// Every member puts its whole input for each other member and pulls every
// other member's at once: one round trip instead of the ring's 2(n-1) in a
// row, for (n-1) times the ring's bytes. Each member then folds the inputs in
// rank order, ((x0 op x1) op x2) ..., so all members compute the same
// expression and their results are bit-identical. What is put is a copy of
// the input: a member may finish before its peers have pulled, and its input
// (a variable, say) may change right after.
void WorkerCollectiveExecutor::RunOneRound(std::shared_ptr<CollectiveRun> run) {
  const int n = run->size();
  const RingStep step;  // wire step 0, chunk 0 in the keys
  absl::StatusOr<Tensor> mine = Tensor::Allocate(run->input.dtype(), run->input.shape());
  if (!mine.ok()) return run->Finish(mine.status());
  CopyElements(run->input, &*mine, 0);
  for (int dst = 0; dst < n; ++dst) {
    if (dst != run->rank)
      options_.table->Put(run->Key(step, 0, run->rank, dst), *mine, run->deadline);
  }
  struct Inputs {
    std::vector<Tensor> of;  // by rank
    std::atomic<int> missing;
  };
  auto inputs = std::make_shared<Inputs>();
  inputs->of.resize(n);
  inputs->of[run->rank] = run->input;
  inputs->missing = n - 1;
  for (int src = 0; src < n; ++src) {
    if (src == run->rank) continue;
    const std::string key = run->Key(step, 0, src, run->rank);
    Receive(run, src, key, Tensor(), [run, inputs, src, key](absl::Status s, Tensor got) {
      if (run->failed()) return;
      if (!s.ok()) return run->Finish(s);
      if (got.dtype() != run->params.dtype || got.NumElements() != run->input.NumElements()) {
        return run->Finish(errors::Internal("collective chunk '", key, "' has ", got.NumElements(),
                                            " ", DataTypeString(got.dtype()), " elements, not ",
                                            run->input.NumElements()));
      }
      inputs->of[src] = std::move(got);
      if (inputs->missing.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
      const int64_t count = run->flat.NumElements();
      void* out = run->flat.raw_data();
      Merge(run->params.dtype, run->params.merge_op, inputs->of[1].raw_data(),
            inputs->of[0].raw_data(), out, count);
      for (int r = 2; r < run->size(); ++r) {
        Merge(run->params.dtype, run->params.merge_op, inputs->of[r].raw_data(), out, out, count);
      }
      if (run->params.final_op == "Div") Divide(run->params.dtype, out, count, run->size());
      run->Finish(absl::OkStatus());
    });
  }
}

// Recursive doubling, for a group of 2^k members: in round j each member
// swaps its value with the member whose rank differs in bit j, and both
// compute (lower rank's value) op (higher rank's value), so after round j
// the 2^(j+1) members of each block hold bit-identical values; after k rounds
// every member holds the fold of all inputs, and applies final_op. k round
// trips in a row, each moving the whole tensor to one peer: for 4 members 2
// requests per member instead of RunOneRound's 3, with a third less data.
// Every value put is a buffer of its own that nothing writes afterwards (a
// copy of the input, then each round's result), as a peer may pull it late.
void WorkerCollectiveExecutor::RunDoublingRound(std::shared_ptr<CollectiveRun> run, int round,
                                                Tensor value) {
  if (run->failed()) return;
  const int n = run->size();
  if (round == 0) {
    absl::StatusOr<Tensor> mine = Tensor::Allocate(run->input.dtype(), run->input.shape());
    if (!mine.ok()) return run->Finish(mine.status());
    CopyElements(run->input, &*mine, 0);
    value = *std::move(mine);
  }
  const int partner = run->rank ^ (1 << round);
  const bool last = (2 << round) == n;
  RingStep step;
  step.wire_step = round;
  options_.table->Put(run->Key(step, 0, run->rank, partner), value, run->deadline);
  // The last round's result is the output; earlier ones get a buffer each.
  Tensor next = run->flat;
  if (!last) {
    absl::StatusOr<Tensor> fresh = Tensor::Allocate(run->input.dtype(), run->flat.shape());
    if (!fresh.ok()) return run->Finish(fresh.status());
    next = *std::move(fresh);
  }
  // A remote partner's value is received straight into `next`, and merged
  // there in place.
  Tensor into;
  if (!DeviceNameUtils::IsSameAddressSpace(run->group->devices[partner], options_.task)) {
    into = next;
  }
  const std::string key = run->Key(step, 0, partner, run->rank);
  Receive(run, partner, key, std::move(into),
          [this, run, round, partner, last, key, value, next](absl::Status s, Tensor got) mutable {
            if (run->failed()) return;
            if (!s.ok()) return run->Finish(s);
            const int64_t count = run->flat.NumElements();
            if (got.dtype() != run->params.dtype || got.NumElements() != count) {
              return run->Finish(errors::Internal("collective chunk '", key, "' has ",
                                                  got.NumElements(), " ",
                                                  DataTypeString(got.dtype()),
                                                  " elements, not ", count));
            }
            const void* lower = partner < run->rank ? got.raw_data() : value.raw_data();
            const void* higher = partner < run->rank ? value.raw_data() : got.raw_data();
            Merge(run->params.dtype, run->params.merge_op, lower, higher, next.raw_data(), count);
            if (!last) return RunDoublingRound(run, round + 1, std::move(next));
            if (run->params.final_op == "Div") {
              Divide(run->params.dtype, next.raw_data(), count, run->size());
            }
            run->Finish(absl::OkStatus());
          });
}

void WorkerCollectiveExecutor::ChunkDone(std::shared_ptr<CollectiveRun> run) {
  const int64_t next = run->next_chunk.fetch_add(1);
  if (next < run->num_chunks) {
    // On the pool, not inline: a long run of chunks whose data is already
    // there would otherwise nest one call per chunk.
    options_.pool->Schedule([this, run, next] { RunChunk(run, next, 0); });
  }
  if (run->chunks_done.fetch_add(1) + 1 == run->num_chunks) run->Finish(absl::OkStatus());
}

void WorkerCollectiveExecutor::Receive(const std::shared_ptr<CollectiveRun>& run, int src,
                                       const std::string& key, Tensor into,
                                       std::function<void(absl::Status, Tensor)> done) {
  const std::string& src_device = run->group->devices[src];
  if (DeviceNameUtils::IsSameAddressSpace(src_device, options_.task)) {
    options_.table->Get(key, run->deadline,
                        [src_device, done = std::move(done)](absl::Status s, Tensor t) {
                          if (absl::IsDeadlineExceeded(s)) {
                            s = WithContext(s, absl::StrCat("waiting for ", src_device));
                          }
                          done(s, std::move(t));
                        });
    return;
  }
  const std::string src_task = DeviceNameUtils::TaskName(src_device);
  WorkerInterface* peer = options_.peer ? options_.peer(src_task) : nullptr;
  if (peer == nullptr) {
    return done(errors::Unavailable("no route to task ", src_task, " to receive '", key, "'"),
                Tensor());
  }
  auto tensor = std::make_shared<Tensor>(std::move(into));
  peer->RecvBufAsync(key, run->deadline, tensor.get(),
                     [tensor, src_device, key, done = std::move(done)](absl::Status s) {
                       if (!s.ok() && !absl::IsCancelled(s) && !absl::IsAborted(s)) {
                         s = WithContext(s, absl::StrCat("receiving collective chunk '", key,
                                                         "' from ", src_device));
                       }
                       done(s, std::move(*tensor));
                     });
}

}  // namespace tensorgrid
