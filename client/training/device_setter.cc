#include "client/training/device_setter.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/merge_device.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/device_name.h"
#include "core/framework/tensor_shape.h"
#include "core/framework/types.h"

namespace tensorgrid {

namespace {

// The loads of the tasks, shared by the copies of one greedy strategy.
struct TaskLoads {
  absl::Mutex mu;
  std::vector<int64_t> loads ABSL_GUARDED_BY(mu);
};

// The position of one round-robin strategy, shared by its copies.
struct NextTask {
  absl::Mutex mu;
  int next ABSL_GUARDED_BY(mu) = 0;
};

int64_t Elements(const NodeDef& node, const char* shape_attr) {
  PartialTensorShape shape;
  if (!HasNodeAttr(node, shape_attr) || !GetNodeAttr(node, shape_attr, &shape).ok()) return 1;
  int64_t elements = 1;
  for (int d = 0; d < shape.dims(); ++d) elements *= std::max<int64_t>(shape.dim_size(d), 1);
  return elements;
}

int64_t ElementSize(const NodeDef& node, const char* dtype_attr) {
  DataType dtype = DT_INVALID;
  if (!HasNodeAttr(node, dtype_attr) || !GetNodeAttr(node, dtype_attr, &dtype).ok()) return 1;
  return std::max(DataTypeSize(dtype), 1);
}

// TensorFlow's _ReplicaDeviceChooser.device_function.
class ReplicaDeviceChooser {
 public:
  explicit ReplicaDeviceChooser(const ReplicaDeviceSetterOptions& options)
      : options_(options),
        ps_(DeviceNameUtils::Parse(options.ps_device)),
        worker_(DeviceNameUtils::Parse(options.worker_device)) {
    if (options_.ps_tasks > 0 && !options_.ps_strategy) {
      options_.ps_strategy = RoundRobinStrategy(options_.ps_tasks);
    }
  }

  std::string operator()(const NodeDef& node) const {
    if (!options_.merge_devices && !node.device().empty()) return node.device();
    // A malformed name is returned as it is, for the Scope to report.
    absl::StatusOr<ParsedDeviceName> current = DeviceNameUtils::Parse(node.device());
    if (!current.ok()) return node.device();
    const auto& ps_ops = options_.ps_ops;
    if (options_.ps_tasks > 0 && !options_.ps_device.empty() &&
        std::find(ps_ops.begin(), ps_ops.end(), node.op()) != ps_ops.end()) {
      if (!ps_.ok()) return options_.ps_device;
      ParsedDeviceName ps = *ps_;
      // A task only for a ps job the node's own request does not override.
      if (ps.has_job && (!current->has_job || current->job == ps.job)) {
        const int task = options_.ps_strategy(node);
        if (task < 0 || task >= options_.ps_tasks) {
          return absl::StrCat("ps_strategy chose task ", task, ", but ps_tasks is ",
                              options_.ps_tasks);
        }
        ps.has_task = true;
        ps.task = task;
      }
      return DeviceNameUtils::ToString(MergeDevice(ps, *current));
    }
    if (!worker_.ok()) return options_.worker_device;
    return DeviceNameUtils::ToString(MergeDevice(*worker_, *current));
  }

 private:
  ReplicaDeviceSetterOptions options_;
  absl::StatusOr<ParsedDeviceName> ps_;
  absl::StatusOr<ParsedDeviceName> worker_;
};

}  // namespace

PsStrategy RoundRobinStrategy(int num_tasks) {
  auto state = std::make_shared<NextTask>();
  return [state, num_tasks](const NodeDef&) {
    absl::MutexLock lock(&state->mu);
    const int task = state->next;
    state->next = (state->next + 1) % std::max(num_tasks, 1);
    return task;
  };
}

PsStrategy GreedyLoadBalancingStrategy(int num_tasks, PsLoadFunction load_fn) {
  auto state = std::make_shared<TaskLoads>();
  state->loads.assign(std::max(num_tasks, 1), 0);
  return [state, load_fn = std::move(load_fn)](const NodeDef& node) {
    const int64_t load = load_fn(node);
    absl::MutexLock lock(&state->mu);
    auto least = std::min_element(state->loads.begin(), state->loads.end());
    *least += load;
    return static_cast<int>(least - state->loads.begin());
  };
}

PsStrategy GreedyLoadBalancingStrategy(int num_tasks) {
  return GreedyLoadBalancingStrategy(num_tasks, ByteSizeLoadFunction);
}

int64_t ByteSizeLoadFunction(const NodeDef& node) {
  if (!HasNodeAttr(node, "dtype") && HasNodeAttr(node, "value_dtype")) {
    return Elements(node, "value_shape") * ElementSize(node, "value_dtype");
  }
  return Elements(node, "shape") * ElementSize(node, "dtype");
}

DeviceFunction ReplicaDeviceSetter(const ReplicaDeviceSetterOptions& options) {
  auto chooser = std::make_shared<const ReplicaDeviceChooser>(options);
  return [chooser](const NodeDef& node) { return (*chooser)(node); };
}

}  // namespace tensorgrid
