// WorkerInterface: what a master asks of a worker. The in-process Worker
// implements it directly; the distributed runtime implements it over gRPC, so
// the master cannot tell the two apart. Requests carry Tensors (not protos):
// in-process calls never serialize tensor data.
#ifndef TENSORGRID_CORE_RUNTIME_WORKER_INTERFACE_H_
#define TENSORGRID_CORE_RUNTIME_WORKER_INTERFACE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "core/framework/cancellation.h"
#include "core/framework/device.h"  // DeviceInfo
#include "core/framework/tensor.h"
#include "core/framework/types.h"
#include "core/platform/blocking.h"
#include "proto/graph.pb.h"
#include "proto/step_stats.pb.h"

namespace tensorgrid {

struct RegisterGraphArgs {
  GraphDef graph;  // one partition; every node's `device` names a device of this worker
};
struct RegisterGraphResult {
  std::string graph_handle;
};

struct RunGraphArgs {
  std::string graph_handle;
  int64_t step_id = 0;
  std::vector<Tensor> feeds;  // by _Arg index
  int64_t timeout_in_ms = 0;  // 0: none
  bool collect_step_stats = false;
};
struct RunGraphResult {
  std::vector<Tensor> fetches;  // by _Retval index
  StepStats step_stats;
};

struct GetStatusResult {
  std::vector<DeviceInfo> devices;
};

// Collective group resolution (docs/collectives.md): every member device asks
// the group leader to join; the leader answers each once group_size joined.
struct CompleteGroupArgs {
  int group_key = 0;
  int group_size = 0;
  std::string device_type;  // "CPU"
  std::string device;       // full name of the joining member
  uint64_t incarnation = 0;
  absl::Duration timeout;  // the leader gives up (DeadlineExceeded) after this
};
struct CompleteGroupResult {
  int group_key = 0;
  int group_size = 0;
  std::string device_type;
  std::vector<std::string> devices;  // sorted by name: a member's rank is its index
  std::vector<uint64_t> incarnations;
};
// Per instance, on a member's first run and after a failed one: the leader
// checks that the members agree (op, dtype, shape), tells a broadcast's
// receivers which rank sends, and gives all the same next exec_seq.
struct CompleteInstanceArgs {
  int group_key = 0;
  int group_size = 0;
  int instance_key = 0;
  std::string device;
  std::string op;  // "CollectiveReduce", "CollectiveBcast", "CollectiveGather"
  DataType dtype = DT_INVALID;
  std::vector<int64_t> shape;
  bool is_source = false;
  absl::Duration timeout;
  // The exec_seq this member would use next (0 on its first run).
  int64_t next_seq = 0;
};
struct CompleteInstanceResult {
  int source_rank = -1;  // broadcasts only
  int64_t exec_seq = 0;  // every member's next exec_seq: the largest proposed
};

class WorkerInterface {
 public:
  virtual ~WorkerInterface() = default;
  // The task's devices; DeadlineExceeded if no answer came by `deadline`
  // (InfiniteFuture: the implementation's own RPC timeout).
  virtual void GetStatusAsync(absl::Time deadline, GetStatusResult* response,
                              StatusCallback done) = 0;
  virtual void RegisterGraphAsync(const RegisterGraphArgs& request, RegisterGraphResult* response,
                                  StatusCallback done) = 0;
  // DeadlineExceeded if no answer came by `deadline` (InfiniteFuture: the
  // implementation's own RPC timeout).
  virtual void DeregisterGraphAsync(const std::string& graph_handle, absl::Time deadline,
                                    StatusCallback done) = 0;
  // Runs one partition of a step. Partitions of one step share a step_id and
  // exchange tensors through that step's rendezvous; when one fails, the
  // worker aborts the step's rendezvous so its peers stop waiting.
  virtual void RunGraphAsync(const RunGraphArgs& request, RunGraphResult* response,
                             StatusCallback done) = 0;
  // Releases per-step state (the rendezvous) once every partition is done.
  // Partitions of the step still running are cancelled: a master cleans a
  // step up early when it failed elsewhere or its client went away.
  virtual void CleanupGraphAsync(int64_t step_id, StatusCallback done) = 0;
  // Delivers the tensor another task's _Recv wants: waits until this worker's
  // partition of step `step_id` has sent `rendezvous_key` (or the step fails
  // or is cleaned up). With `cancellation`, its cancelling withdraws the
  // request at once (Cancelled): a waiting receive pins nothing after its
  // requester went away. Workers that cannot serve tensors say Unimplemented.
  virtual void RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key, Tensor* tensor,
                               StatusCallback done, CancellationManager* cancellation = nullptr) {
    done(absl::UnimplementedError("this worker does not serve RecvTensor"));
  }
  // Several tensors of step `step_id` at once (a step's receives from one
  // task): as RecvTensorAsync for each key, with `received(i, status)`
  // once per key, its tensor in `(*tensors)[i]` when OK, in any order.
  // `tensors` (one per key) must stay valid until every key was received.
  // Workers reached over a network answer them all in one request; this
  // form asks for each on its own.
  virtual void RecvTensorsAsync(int64_t step_id, const std::vector<std::string>& keys,
                                std::vector<Tensor>* tensors,
                                std::function<void(int index, absl::Status status)> received,
                                CancellationManager* cancellation = nullptr) {
    for (size_t i = 0; i < keys.size(); ++i) {
      RecvTensorAsync(
          step_id, keys[i], &(*tensors)[i],
          [received, i](absl::Status s) { received(static_cast<int>(i), std::move(s)); },
          cancellation);
    }
  }
  // Collectives. The group leader's worker answers CompleteGroup and
  // CompleteInstance; every worker serves RecvBuf: the collective chunk
  // `key` once a member on this worker has produced it, DeadlineExceeded
  // after `deadline`. When `*tensor` is initialized on entry, a worker may
  // write the chunk into its buffer instead of allocating (it must then have
  // the chunk's dtype and element count); `*tensor` ends up sharing
  // whichever buffer holds the chunk. A `cancellation` withdraws a waiting
  // RecvBuf as it does a RecvTensor. Workers that cannot say Unimplemented.
  virtual void CompleteGroupAsync(const CompleteGroupArgs& request, CompleteGroupResult* response,
                                  StatusCallback done) {
    done(absl::UnimplementedError("this worker does not lead collective groups"));
  }
  virtual void CompleteInstanceAsync(const CompleteInstanceArgs& request,
                                     CompleteInstanceResult* response, StatusCallback done) {
    done(absl::UnimplementedError("this worker does not lead collective groups"));
  }
  virtual void RecvBufAsync(const std::string& key, absl::Time deadline, Tensor* tensor,
                            StatusCallback done, CancellationManager* cancellation = nullptr) {
    done(absl::UnimplementedError("this worker does not serve RecvBuf"));
  }
  // Drops every resource (variables, queues) in the named containers of all
  // this worker's devices; every container when `containers` is empty.
  // Variables there become uninitialized. Workers that cannot say Unimplemented.
  virtual void CleanupAllAsync(const std::vector<std::string>& containers, StatusCallback done) {
    done(absl::UnimplementedError("this worker does not support CleanupAll"));
  }

  // Blocking forms.
  absl::Status GetStatus(GetStatusResult* response);
  absl::Status RegisterGraph(const RegisterGraphArgs& request, RegisterGraphResult* response);
  absl::Status DeregisterGraph(const std::string& graph_handle);
  absl::Status RunGraph(const RunGraphArgs& request, RunGraphResult* response);
  absl::Status CleanupGraph(int64_t step_id);
  absl::Status CleanupAll(const std::vector<std::string>& containers);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_WORKER_INTERFACE_H_
