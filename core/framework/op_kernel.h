// OpKernel: the code that computes one node, and the kernel registry.
//
// A kernel is constructed once per node (reading attrs, possibly failing) and
// computed once per step, possibly concurrently from several steps: Compute
// must not mutate the kernel. Registration, one line per dtype:
//
//   TG_REGISTER_KERNEL(KernelDefBuilder("MatMul").Device(DEVICE_CPU).TypeConstraint<float>("T"),
//                      MatMulOp<float>);
#ifndef TENSORGRID_CORE_FRAMEWORK_OP_KERNEL_H_
#define TENSORGRID_CORE_FRAMEWORK_OP_KERNEL_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "core/framework/allocator.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/cancellation.h"
#include "core/framework/collective.h"
#include "core/framework/device.h"
#include "core/framework/op_def.h"
#include "core/framework/rendezvous.h"
#include "core/framework/resource_mgr.h"
#include "core/framework/tensor.h"
#include "core/framework/versions.h"

namespace tensorgrid {

// A value flowing along an edge: a tensor, or for legacy ref edges the
// variable itself (consumers of non-ref inputs see its current value).
struct TensorValue {
  Tensor tensor;
  std::shared_ptr<Var> ref;
};

// Feeds and fetches of one step: _Arg kernels read args[index], _Retval
// kernels write retvals[index].
struct CallFrame {
  std::vector<Tensor> args;
  std::vector<Tensor> retvals;
};

class OpKernelConstruction {
 public:
  OpKernelConstruction(Device* device, const NodeDef& def, const OpDef& op_def,
                       std::vector<DataType> input_types, std::vector<DataType> output_types,
                       int graph_def_version = kGraphDefVersion)
      : device_(device),
        def_(def),
        op_def_(op_def),
        input_types_(std::move(input_types)),
        output_types_(std::move(output_types)),
        graph_def_version_(graph_def_version) {}

  template <typename T>
  absl::Status GetAttr(absl::string_view name, T* value) const {
    return GetNodeAttr(def_, name, value);
  }
  const NodeDef& def() const { return def_; }
  const OpDef& op_def() const { return op_def_; }
  Device* device() const { return device_; }
  // The producer version of the GraphDef the node came from, for the few
  // semantics that depend on it (core/framework/versions.h).
  int graph_def_version() const { return graph_def_version_; }
  const std::vector<DataType>& input_types() const { return input_types_; }
  const std::vector<DataType>& output_types() const { return output_types_; }
  // Where each argument lives (empty on host-only devices: all host memory).
  const std::vector<MemoryType>& input_memory_types() const { return input_memory_types_; }
  const std::vector<MemoryType>& output_memory_types() const { return output_memory_types_; }
  void set_memory_types(std::vector<MemoryType> inputs, std::vector<MemoryType> outputs) {
    input_memory_types_ = std::move(inputs);
    output_memory_types_ = std::move(outputs);
  }
  // Kernels report constructor failures here (see TG_REQUIRES_OK_CTOR).
  void SetStatus(absl::Status s) {
    if (status_.ok()) status_ = std::move(s);
  }
  const absl::Status& status() const { return status_; }

 private:
  Device* device_;
  const NodeDef& def_;
  const OpDef& op_def_;
  std::vector<DataType> input_types_, output_types_;
  std::vector<MemoryType> input_memory_types_, output_memory_types_;
  int graph_def_version_;
  absl::Status status_;
};

#define TG_REQUIRES_OK_CTOR(ctx, expr) \
  do {                                 \
    ::absl::Status tg_s_ = (expr);     \
    if (!tg_s_.ok()) {                 \
      (ctx).SetStatus(tg_s_);          \
      return;                          \
    }                                  \
  } while (0)

class OpKernelContext;

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction& ctx);
  virtual ~OpKernel() = default;
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  // Errors need not name the node: the executor prefixes "node 'x' (Op): ".
  virtual absl::Status Compute(OpKernelContext& ctx) = 0;
  // Cheap kernels run inline on the executor's thread; expensive ones may be
  // dispatched to the inter-op pool.
  virtual bool IsExpensive() const { return true; }
  // Non-null for kernels that complete asynchronously.
  virtual class AsyncOpKernel* AsAsync() { return nullptr; }

  const std::string& name() const { return def_.name(); }
  const std::string& type_string() const { return def_.op(); }
  const NodeDef& def() const { return def_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  // Where input/output i lives: DEVICE_MEMORY unless the registration says
  // HostMemory (or the dtype is a string or handle); always HOST_MEMORY on a
  // host-only device.
  MemoryType input_memory_type(int i) const {
    return input_memory_types_.empty() ? HOST_MEMORY : input_memory_types_[i];
  }
  MemoryType output_memory_type(int i) const {
    return output_memory_types_.empty() ? HOST_MEMORY : output_memory_types_[i];
  }

 private:
  const NodeDef def_;
  const std::vector<DataType> input_types_;
  const std::vector<DataType> output_types_;
  const std::vector<MemoryType> input_memory_types_;
  const std::vector<MemoryType> output_memory_types_;
};

class AsyncOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using DoneCallback = std::function<void(absl::Status)>;
  virtual void ComputeAsync(OpKernelContext& ctx, DoneCallback done) = 0;
  AsyncOpKernel* AsAsync() final { return this; }
  // Runs ComputeAsync and blocks until it is done.
  absl::Status Compute(OpKernelContext& ctx) final;
};

class OpKernelContext {
 public:
  struct Params {
    Device* device = nullptr;
    const OpKernel* kernel = nullptr;
    int64_t step_id = 0;
    TensorValue* inputs = nullptr;  // kernel->num_inputs() values
    CallFrame* call_frame = nullptr;
    CancellationManager* cancellation = nullptr;
    Rendezvous* rendezvous = nullptr;          // the step's, for _Send/_Recv
    CollectiveExecutor* collective = nullptr;  // the worker's, for Collective* ops
  };
  explicit OpKernelContext(const Params& params);

  int num_inputs() const { return params_.kernel->num_inputs(); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // The value of data input i (ref inputs: the variable's current tensor).
  const Tensor& input(int i) const { return params_.inputs[i].tensor; }
  // The variable behind ref input i (null if the input is not a ref).
  const std::shared_ptr<Var>& input_ref(int i) const { return params_.inputs[i].ref; }

  // Allocates output i with the output's dtype; ResourceExhausted past the cap.
  absl::Status allocate_output(int i, const TensorShape& shape, Tensor** out);
  // Reuses input `in`'s buffer for output `out` when nothing else references it
  // and dtype and size match; allocates otherwise.
  absl::Status forward_input_or_allocate_output(int in, int out, const TensorShape& shape,
                                                Tensor** result);
  void set_output(int i, Tensor t) { outputs_[i].tensor = std::move(t); }
  void set_output_ref(int i, std::shared_ptr<Var> var) { outputs_[i].ref = std::move(var); }

  const OpKernel& kernel() const { return *params_.kernel; }
  Device* device() const { return params_.device; }
  const Eigen::ThreadPoolDevice& eigen_cpu_device() const {
    return params_.device->eigen_cpu_device();
  }
  ResourceMgr* resource_manager() const { return params_.device->resource_manager(); }
  CallFrame* call_frame() const { return params_.call_frame; }
  CancellationManager* cancellation() const { return params_.cancellation; }
  Rendezvous* rendezvous() const { return params_.rendezvous; }
  CollectiveExecutor* collective() const { return params_.collective; }
  int64_t step_id() const { return params_.step_id; }

  // For the executor: the outputs after Compute.
  absl::InlinedVector<TensorValue, 2>& outputs() { return outputs_; }

 private:
  const Params& params_;
  absl::InlinedVector<TensorValue, 2> outputs_;
};

// Describes which nodes a kernel serves.
class KernelDefBuilder {
 public:
  explicit KernelDefBuilder(std::string op) : op_(std::move(op)) {}
  KernelDefBuilder& Device(std::string type) {
    device_type_ = std::move(type);
    return *this;
  }
  KernelDefBuilder& TypeConstraint(std::string attr, DataType type) {
    constraints_.emplace_back(std::move(attr), std::vector<DataType>{type});
    return *this;
  }
  template <typename T>
  KernelDefBuilder& TypeConstraint(std::string attr) {
    return TypeConstraint(std::move(attr), DataTypeToEnum<T>::value);
  }
  // Argument kept in host memory on accelerators (shape-like int32 inputs).
  KernelDefBuilder& HostMemory(std::string arg) {
    host_memory_.push_back(std::move(arg));
    return *this;
  }

 private:
  friend class KernelRegistry;
  std::string op_;
  std::string device_type_ = DEVICE_CPU;
  std::vector<std::pair<std::string, std::vector<DataType>>> constraints_;
  std::vector<std::string> host_memory_;
};

using KernelFactory = std::function<std::unique_ptr<OpKernel>(OpKernelConstruction&)>;

class KernelRegistry {
 public:
  static KernelRegistry* Global();
  void Register(const KernelDefBuilder& def, KernelFactory factory);
  // Registers every kernel of `op` for device type `from` again for `to`,
  // with `host_memory` as its HostMemory arguments (the fake GPU of tests
  // runs CPU kernels). Returns how many were copied.
  int RegisterCopies(const std::string& op, absl::string_view from, const std::string& to,
                     const std::vector<std::string>& host_memory);
  // Whether a kernel of `device_type` matches the node's attrs.
  bool HasKernel(const NodeDef& node, absl::string_view device_type) const;
  // Unimplemented (naming op, node and device type) when no kernel matches;
  // the constructor's error otherwise. `graph_def_version` is the producer
  // version of the node's GraphDef.
  absl::StatusOr<std::unique_ptr<OpKernel>> CreateKernel(
      Device* device, const NodeDef& node, const OpDef& op_def,
      int graph_def_version = kGraphDefVersion) const;

 private:
  struct Registration {
    KernelDefBuilder def;
    KernelFactory factory;
  };
  const Registration* Find(const NodeDef& node, absl::string_view device_type) const;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::vector<Registration>> kernels_ ABSL_GUARDED_BY(mu_);
};

struct KernelRegistrar {
  KernelRegistrar(const KernelDefBuilder& def, KernelFactory factory) {
    KernelRegistry::Global()->Register(def, std::move(factory));
  }
};

#define TG_REGISTER_KERNEL(builder, ...) TG_REGISTER_KERNEL_UNIQ_(__COUNTER__, builder, __VA_ARGS__)
#define TG_REGISTER_KERNEL_UNIQ_(ctr, builder, ...) \
  TG_REGISTER_KERNEL_UNIQ2_(ctr, builder, __VA_ARGS__)
#define TG_REGISTER_KERNEL_UNIQ2_(ctr, builder, ...)                                           \
  static ::tensorgrid::KernelRegistrar tg_kernel_registrar_##ctr(                              \
      ::tensorgrid::builder,                                                                   \
      [](::tensorgrid::OpKernelConstruction& ctx) -> std::unique_ptr<::tensorgrid::OpKernel> { \
        return std::make_unique<__VA_ARGS__>(ctx);                                             \
      })

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_OP_KERNEL_H_
