#include "client/distribute/strategy.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/ops/array_ops.h"
#include "client/ops/collective_ops.h"
#include "client/ops/math_ops.h"
#include "client/ops/state_ops.h"
#include "core/framework/device_factory.h"
#include "core/framework/device_name.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace distribute {

using training::GradAndVar;
using training::Variable;

namespace {

// Replica `local`'s component of `v` (v itself when it is not mirrored).
Variable Component(const Variable& v, int local) {
  const std::vector<Variable>& c = v.components();
  return c.empty() ? v : c[std::min<size_t>(local, c.size() - 1)];
}

// A session config under which every one of `devices` exists: as many CPUs
// as "/device:CPU:k" needs; with a GPU among them, soft placement, so that
// a replica's ops with no GPU kernel run on its task's CPU.
ConfigProto ConfigFor(const std::vector<std::string>& devices) {
  int cpus = 1;
  bool gpu = false;
  for (const std::string& d : devices) {
    absl::StatusOr<ParsedDeviceName> p = DeviceNameUtils::Parse(d);
    if (!p.ok()) continue;
    if (p->has_id && (!p->has_type || p->type == DEVICE_CPU)) cpus = std::max(cpus, p->id + 1);
    gpu = gpu || (p->has_type && p->type == DEVICE_GPU);
  }
  ConfigProto config;
  (*config.mutable_device_count())[DEVICE_CPU] = cpus;
  if (gpu) config.set_allow_soft_placement(true);
  return config;
}

// Every local GPU, as in TensorFlow; two CPUs where there is none.
std::vector<std::string> DefaultDevices(std::vector<std::string> devices) {
  if (!devices.empty()) return devices;
  const int gpus = LocalDeviceCount(DEVICE_GPU, ConfigProto()).value_or(0);
  for (int k = 0; k < gpus; ++k) devices.push_back(absl::StrCat("/device:GPU:", k));
  if (devices.empty()) devices = {"/device:CPU:0", "/device:CPU:1"};
  return devices;
}

// `x` / n in x's dtype.
Output DivideBy(const Scope& scope, const Output& x, int n) {
  if (n == 1) return x;
  return ops::RealDiv(scope, x,
                      ops::Cast(scope, ops::Const(scope, static_cast<float>(n)), x.type()));
}

}  // namespace

// The VariableCreator a strategy's scopes carry.
class Strategy::Creator final : public training::VariableCreator {
 public:
  explicit Creator(Strategy* strategy) : strategy_(strategy) {}
  Variable Create(const Scope& scope, const std::string& name, const TensorShape& shape,
                  DataType dtype, const training::Initializer& initializer,
                  const training::VariableOptions& options) const override {
    if (strategy_ == nullptr) {
      scope.UpdateStatus(errors::FailedPrecondition(
          "variable '", name, "': the distribution strategy whose scope this is was destroyed"));
      return Variable();
    }
    if (strategy_->in_run_) {
      scope.UpdateStatus(errors::InvalidArgument(
          "variable '", name,
          "' is made inside a step function: make the model's variables in "
          "the strategy's scope before Run, so that every replica shares them (and train with "
          "ReplicaContext::Minimize, not Optimizer::Minimize, whose slots are variables too)"));
      return Variable();
    }
    Variable v = strategy_->CreateVariable(scope, name, shape, dtype, initializer, options);
    if (v.valid() && options.trainable) strategy_->trainable_.push_back(v);
    return v;
  }
  // The strategy is gone: scopes that outlive it get an error, not a crash.
  void Detach() const { strategy_ = nullptr; }

 private:
  mutable Strategy* strategy_;
};

// ---------------------------------------------------------------------------
// ReplicaContext

int ReplicaContext::num_replicas_in_sync() const { return strategy_->num_replicas_in_sync(); }

absl::Status ReplicaContext::Minimize(training::Optimizer* optimizer, const Output& loss,
                                      const std::vector<Variable>& var_list,
                                      const std::optional<Variable>& global_step) {
  if (optimizer == nullptr) return errors::InvalidArgument("Minimize: optimizer is null");
  const std::vector<Variable>& vars =
      var_list.empty() ? strategy_->trainable_variables() : var_list;
  if (vars.empty()) {
    return errors::InvalidArgument(
        "Minimize: no trainable variable was made in the strategy's scope, and no var_list given");
  }
  std::vector<Variable> mine;
  for (const Variable& v : vars) {
    if (v.components().empty()) {
      for (const Variable& made : strategy_->trainable_variables()) {
        if (!made.components().empty() && made.components()[0].name() == v.name()) {
          return errors::InvalidArgument(
              "Minimize: variable '", v.name(),
              "' is only the primary copy of a mirrored "
              "variable (as TrainableVariables() returns it): pass the Variable made in the "
              "strategy's scope, or no var_list");
        }
      }
    }
    mine.push_back(Component(v, local_index_));
  }
  TG_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                      optimizer->ComputeGradients(scope_, loss, mine));
  return strategy_->AddUpdate(local_index_, optimizer, std::move(grads), vars, global_step);
}

absl::Status ReplicaContext::ApplyGradients(training::Optimizer* optimizer,
                                            const std::vector<GradAndVar>& grads_and_vars,
                                            const std::optional<Variable>& global_step) {
  if (optimizer == nullptr) return errors::InvalidArgument("ApplyGradients: optimizer is null");
  std::vector<GradAndVar> mine;
  std::vector<Variable> vars;
  for (const GradAndVar& gv : grads_and_vars) {
    mine.emplace_back(gv.first, Component(gv.second, local_index_));
    vars.push_back(gv.second);
  }
  return strategy_->AddUpdate(local_index_, optimizer, std::move(mine), std::move(vars),
                              global_step);
}

Output ReplicaContext::AllReduce(ReduceOp op, const Output& value) {
  Strategy& st = *strategy_;
  const size_t call = st.all_reduce_calls_[local_index_]++;
  if (local_index_ == 0) st.all_reduce_keys_.push_back(st.NextInstanceKey());
  if (call >= st.all_reduce_keys_.size()) {
    scope_.UpdateStatus(errors::InvalidArgument(
        "AllReduce #", call + 1, " of replica ", replica_id_, " has no match on replica ",
        st.first_replica_id(), ": every replica must make the same AllReduce calls"));
    return Output();
  }
  return ops::CollectiveReduce(
      scope_, value, st.num_replicas_in_sync(), st.group_key(), st.all_reduce_keys_[call], "Add",
      op == ReduceOp::kMean ? "Div" : "Id", st.collective_timeout_seconds());
}

// ---------------------------------------------------------------------------
// Strategy

Strategy::Strategy(std::vector<std::string> devices, int num_workers, int worker_index)
    : devices_(std::move(devices)),
      num_replicas_in_sync_(num_workers * static_cast<int>(devices_.size())),
      first_replica_(worker_index * static_cast<int>(devices_.size())),
      creator_(std::make_shared<Creator>(this)) {
  SetGroup(devices_);
}

Strategy::~Strategy() { creator_->Detach(); }

Scope Strategy::scope(const Scope& root) const { return root.WithVariableCreator(creator_); }

ConfigProto Strategy::session_config() const { return ConfigFor(devices_); }

absl::Status Strategy::AddUpdate(int local_index, training::Optimizer* optimizer,
                                 std::vector<GradAndVar> grads, std::vector<Variable> vars,
                                 const std::optional<Variable>& global_step) {
  const int index = calls_[local_index]++;
  if (local_index == 0) {
    PendingUpdate update;
    update.optimizer = optimizer;
    update.global_step = global_step;
    update.grads.resize(devices_.size());
    update.grads[0] = std::move(grads);
    update.vars = std::move(vars);
    pending_.push_back(std::move(update));
    return absl::OkStatus();
  }
  if (index >= static_cast<int>(pending_.size()) || pending_[index].optimizer != optimizer ||
      pending_[index].vars.size() != vars.size()) {
    return errors::InvalidArgument(
        "replica ", first_replica_ + local_index, "'s update #", index + 1,
        " does not match replica ", first_replica_,
        "'s: every replica's step function must make the same Minimize/ApplyGradients calls, "
        "with the same optimizer and variables");
  }
  pending_[index].grads[local_index] = std::move(grads);
  return absl::OkStatus();
}

absl::StatusOr<DistributedStep> Strategy::Run(const Scope& scope, const StepFn& step_fn,
                                              const std::vector<PerReplica>& inputs) {
  const int n = static_cast<int>(devices_.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (static_cast<int>(inputs[k].values.size()) != n) {
      return errors::InvalidArgument("Run: input ", k, " has ", inputs[k].values.size(),
                                     " per-replica values; this program builds ", n, " replica(s)");
    }
  }
  TG_RETURN_IF_ERROR(scope.status());
  if (in_run_) {
    return errors::FailedPrecondition(
        "Run called from inside a step function of the same strategy");
  }
  pending_.clear();
  calls_.assign(n, 0);
  all_reduce_keys_.clear();
  all_reduce_calls_.assign(n, 0);
  DistributedStep step;
  in_run_ = true;
  struct Leave {
    bool* flag;
    ~Leave() { *flag = false; }
  } leave{&in_run_};
  for (int r = 0; r < n; ++r) {
    Scope rs =
        (r == 0 ? scope : scope.NewSubScope(absl::StrCat("replica_", r))).WithDevice(devices_[r]);
    std::vector<Output> mine;
    for (const PerReplica& in : inputs) mine.push_back(in.values[r]);
    training::internal::ReplicaGuard guard(r);
    ReplicaContext ctx(this, r, first_replica_ + r, rs, std::move(mine));
    absl::StatusOr<std::vector<Output>> outs = step_fn(ctx);
    if (!outs.ok()) {
      return absl::Status(outs.status().code(),
                          absl::StrCat("step function of replica ", first_replica_ + r, " (",
                                       devices_[r], "): ", outs.status().message()));
    }
    if (r == 0) step.outputs.resize(outs->size());
    if (outs->size() != step.outputs.size()) {
      return errors::InvalidArgument("step function returned ", outs->size(),
                                     " outputs on replica ", first_replica_ + r, " but ",
                                     step.outputs.size(), " on replica ", first_replica_);
    }
    for (size_t k = 0; k < outs->size(); ++k) step.outputs[k].values.push_back((*outs)[k]);
  }
  for (int r = 1; r < n; ++r) {
    if (all_reduce_calls_[r] != all_reduce_calls_[0]) {
      return errors::InvalidArgument("replica ", first_replica_ + r, " made ", all_reduce_calls_[r],
                                     " AllReduce call(s), replica ", first_replica_, " ",
                                     all_reduce_calls_[0],
                                     ": every replica must make the same AllReduce calls");
    }
    if (calls_[r] != calls_[0]) {
      return errors::InvalidArgument("replica ", first_replica_ + r, " asked for ", calls_[r],
                                     " update(s), replica ", first_replica_, " for ", calls_[0],
                                     ": every replica must make the same Minimize/ApplyGradients "
                                     "calls");
    }
  }
  std::vector<Operation> updates;
  const Scope plain = scope.WithVariableCreator(nullptr);
  for (const PendingUpdate& update : pending_) {
    TG_ASSIGN_OR_RETURN(Operation op, Apply(plain, update));
    updates.push_back(op);
  }
  pending_.clear();
  if (!updates.empty()) {
    step.train_op =
        ops::NoOp(plain.NewSubScope("train").WithControlDependencies(updates)).operation;
  }
  TG_RETURN_IF_ERROR(scope.status());
  return step;
}

Output Strategy::Reduce(const Scope& scope, ReduceOp op, const PerReplica& value) {
  const Scope s = scope.WithDevice(host_device());
  if (value.values.size() != devices_.size()) {
    scope.UpdateStatus(errors::InvalidArgument("Reduce: ", value.values.size(),
                                               " per-replica values for ", devices_.size(),
                                               " replica(s)"));
    return Output();
  }
  Output sum = value.values.size() == 1 ? ops::Identity(s, value.values[0]).output
                                        : ops::AddN(s, value.values).sum;
  return op == ReduceOp::kMean ? DivideBy(s, sum, num_replicas_in_sync_) : sum;
}

Output Strategy::Reduce(const Scope& scope, ReduceOp op, const PerReplica& value, int axis) {
  if (value.values.size() != devices_.size()) return Reduce(scope, op, value);  // says why
  PerReplica sums, counts;
  for (size_t r = 0; r < value.values.size(); ++r) {
    const Scope s = scope.WithDevice(devices_[r]);
    const Output& x = value.values[r];
    Output sum = ops::Sum(s, x, ops::Const(s, axis)).output;
    sums.values.push_back(sum);
    // The elements along `axis`: all of x's over what is left after summing it.
    counts.values.push_back(ops::RealDiv(s, ops::Cast(s, ops::Size(s, x), x.type()),
                                         ops::Cast(s, ops::Size(s, sum), x.type())));
  }
  Output total = Reduce(scope, ReduceOp::kSum, sums);
  if (op == ReduceOp::kSum) return total;
  return ops::RealDiv(scope.WithDevice(host_device()), total,
                      Reduce(scope, ReduceOp::kSum, counts));
}

Operation Strategy::CopyPrimaryToReplicas(const Scope& scope) const {
  const Scope plain = scope.WithVariableCreator(nullptr);
  std::vector<Operation> copies;
  for (const Variable& v : trainable_) {
    const std::vector<Variable>& c = v.components();
    for (size_t r = 1; r < c.size(); ++r) {
      const Scope s = plain.ColocateWith(c[r].op());
      copies.push_back(c[r].is_resource()
                           ? ops::AssignVariableOp(s, c[r].handle(), c[0].value()).operation
                           : ops::Assign(s, c[r].handle(), c[0].value()).operation);
    }
  }
  return ops::NoOp(plain.NewSubScope("copy_primary_to_replicas").WithControlDependencies(copies))
      .operation;
}

Variable Strategy::PlainVariable(const Scope& scope, const std::string& device,
                                 const std::string& name, const TensorShape& shape, DataType dtype,
                                 const training::Initializer& initializer,
                                 const training::VariableOptions& options) {
  return Variable(scope.WithDevice(device), name, shape, dtype, initializer, options);
}

absl::StatusOr<Operation> Strategy::ApplyMeanOfLocalGradients(const Scope& scope,
                                                              const PendingUpdate& update) {
  const int n = static_cast<int>(update.grads.size());
  std::vector<GradAndVar> means;
  for (size_t k = 0; k < update.vars.size(); ++k) {
    const Variable& var = update.grads[0][k].second;
    std::vector<Output> grads;
    for (int r = 0; r < n; ++r) {
      if (update.grads[r][k].first.valid()) grads.push_back(update.grads[r][k].first);
    }
    if (grads.empty()) continue;
    const Scope s = scope.ColocateWith(var.op());
    Output sum = grads.size() == 1 ? grads[0] : ops::AddN(s, grads).sum;
    means.emplace_back(DivideBy(s, sum, static_cast<int>(grads.size())), var);
  }
  return update.optimizer->ApplyGradients(scope, means, update.global_step);
}

// ---------------------------------------------------------------------------
// DistributedDataset

absl::StatusOr<DistributedDataset> Strategy::ExperimentalDistributeDataset(const Scope& scope,
                                                                           const Dataset& dataset) {
  TG_ASSIGN_OR_RETURN(std::unique_ptr<DatasetIterator> it, dataset.MakeIterator());
  std::vector<Tensor> first;
  bool end = false;
  TG_RETURN_IF_ERROR(it->GetNext(&first, &end));
  if (end) {
    return errors::InvalidArgument(
        "ExperimentalDistributeDataset: the dataset yields no element (e.g. a Batch with "
        "drop_remainder yields none from fewer examples than one batch)");
  }
  DistributedDataset out;
  out.dataset_ = dataset;
  out.num_replicas_in_sync_ = num_replicas_in_sync_;
  out.first_replica_ = first_replica_;
  const Scope s = scope.WithVariableCreator(nullptr).NewSubScope("distributed_input");
  for (size_t c = 0; c < first.size(); ++c) {
    const Tensor& t = first[c];
    if (t.dims() < 1) {
      return errors::InvalidArgument("ExperimentalDistributeDataset: component ", c,
                                     " is a scalar; elements must be batches (Batch(...))");
    }
    if (t.dim_size(0) % num_replicas_in_sync_ != 0) {
      return errors::InvalidArgument("ExperimentalDistributeDataset: a global batch of ",
                                     t.dim_size(0), " rows does not split evenly across ",
                                     num_replicas_in_sync_, " replicas in sync");
    }
    std::vector<int64_t> dims = {-1};
    for (int d = 1; d < t.dims(); ++d) dims.push_back(t.dim_size(d));
    PerReplica placeholders;
    std::vector<std::string> names;
    for (size_t r = 0; r < devices_.size(); ++r) {
      ops::Placeholder p(s.WithDevice(devices_[r]), t.dtype(),
                         ops::Placeholder::Shape(PartialTensorShape(dims)));
      placeholders.values.push_back(p.output);
      names.push_back(p.output.node_name());
    }
    out.inputs_.push_back(std::move(placeholders));
    out.feed_names_.push_back(std::move(names));
  }
  TG_RETURN_IF_ERROR(scope.status());
  return out;
}

absl::StatusOr<std::unique_ptr<DistributedDataset::Iterator>> DistributedDataset::MakeIterator()
    const {
  TG_ASSIGN_OR_RETURN(std::unique_ptr<DatasetIterator> it, dataset_.MakeIterator());
  return std::unique_ptr<Iterator>(new Iterator(this, std::move(it)));
}

absl::Status DistributedDataset::Iterator::GetNextFeeds(FeedList* feeds, bool* end) {
  feeds->clear();
  std::vector<Tensor> element;
  TG_RETURN_IF_ERROR(it_->GetNext(&element, end));
  if (*end) return absl::OkStatus();
  if (element.size() != owner_->feed_names_.size()) {
    return errors::InvalidArgument("distributed dataset: an element has ", element.size(),
                                   " components, the first had ", owner_->feed_names_.size());
  }
  const int n = owner_->num_replicas_in_sync_;
  for (size_t c = 0; c < element.size(); ++c) {
    const Tensor& t = element[c];
    if (t.dims() < 1 || t.dim_size(0) % n != 0) {
      return errors::InvalidArgument(
          "distributed dataset: a global batch of ", t.dims() < 1 ? 0 : t.dim_size(0),
          " rows (component ", c, ") does not split evenly across ", n,
          " replicas in sync; batch with a multiple of ", n, " and drop_remainder=true");
    }
    const int64_t per = t.dim_size(0) / n;
    last_batch_size_ = t.dim_size(0);
    const std::vector<std::string>& names = owner_->feed_names_[c];
    for (size_t r = 0; r < names.size(); ++r) {
      const int64_t g = owner_->first_replica_ + static_cast<int64_t>(r);
      feeds->emplace_back(names[r], t.Slice(g * per, (g + 1) * per));
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// OneDeviceStrategy

OneDeviceStrategy::OneDeviceStrategy(const std::string& device) : Strategy({device}) {}

Variable OneDeviceStrategy::CreateVariable(const Scope& scope, const std::string& name,
                                           const TensorShape& shape, DataType dtype,
                                           const training::Initializer& initializer,
                                           const training::VariableOptions& options) {
  return PlainVariable(scope, host_device(), name, shape, dtype, initializer, options);
}

absl::StatusOr<Operation> OneDeviceStrategy::Apply(const Scope& scope,
                                                   const PendingUpdate& update) {
  return update.optimizer->ApplyGradients(scope, update.grads[0], update.global_step);
}

// ---------------------------------------------------------------------------
// CentralStorageStrategy

CentralStorageStrategy::CentralStorageStrategy(std::vector<std::string> compute_devices,
                                               std::string parameter_device)
    : Strategy(DefaultDevices(std::move(compute_devices))),
      parameter_device_(std::move(parameter_device)) {}

ConfigProto CentralStorageStrategy::session_config() const {
  std::vector<std::string> all = replica_devices();
  all.push_back(parameter_device_);
  return ConfigFor(all);
}

Variable CentralStorageStrategy::CreateVariable(const Scope& scope, const std::string& name,
                                                const TensorShape& shape, DataType dtype,
                                                const training::Initializer& initializer,
                                                const training::VariableOptions& options) {
  return PlainVariable(scope, parameter_device_, name, shape, dtype, initializer, options);
}

absl::StatusOr<Operation> CentralStorageStrategy::Apply(const Scope& scope,
                                                        const PendingUpdate& update) {
  return ApplyMeanOfLocalGradients(scope, update);
}

// ---------------------------------------------------------------------------
// MirroredStrategy

MirroredStrategy::MirroredStrategy(std::vector<std::string> devices)
    : MirroredStrategy(std::move(devices), Options()) {}

MirroredStrategy::MirroredStrategy(std::vector<std::string> devices, const Options& options)
    : MirroredStrategy(DefaultDevices(std::move(devices)), 1, 0, options) {}

MirroredStrategy::MirroredStrategy(std::vector<std::string> devices, int num_workers,
                                   int worker_index, const Options& options)
    : Strategy(std::move(devices), num_workers, worker_index), options_(options) {}

ConfigProto MirroredStrategy::session_config() const { return ConfigFor(replica_devices()); }

void Strategy::SetGroup(const std::vector<std::string>& member_devices) {
  // The same in every process (FNV-1a, not a seeded hash), different for
  // different member sets.
  std::vector<std::string> sorted = member_devices;
  std::sort(sorted.begin(), sorted.end());
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : absl::StrJoin(sorted, ",")) h = (h ^ c) * 1099511628211ull;
  group_key_ = static_cast<int>(h % 1000000000) + 1;
}

Output MirroredStrategy::InitialValue(const Scope& scope, int local_replica, const Output& primary,
                                      const TensorShape& shape, DataType dtype) {
  return local_replica == 0 ? primary : ops::Identity(scope, primary).output;
}

Variable MirroredStrategy::CreateVariable(const Scope& scope, const std::string& name,
                                          const TensorShape& shape, DataType dtype,
                                          const training::Initializer& initializer,
                                          const training::VariableOptions& options) {
  // Non-trainable variables (the global step) are not mirrored unless asked.
  if (!options.trainable &&
      options.synchronization != training::VariableSynchronization::kOnWrite) {
    return PlainVariable(scope, host_device(), name, shape, dtype, initializer, options);
  }
  const int n = static_cast<int>(replica_devices().size());
  Output primary;
  std::string primary_name;  // within `scope`
  std::vector<Variable> components;
  std::vector<Operation> inits;
  for (int r = 0; r < n; ++r) {
    training::Initializer init([&, r](const Scope& s, const TensorShape& sh, DataType dt) {
      if (r == 0) primary = initializer(s, sh, dt);
      return InitialValue(s, r, primary, sh, dt);
    });
    training::VariableOptions o = options;
    o.trainable = options.trainable && r == 0;  // the copies join "variables" only
    // Copies are named after the primary's name as made unique: "w_1/replica_1".
    Variable v = PlainVariable(scope, replica_devices()[r],
                               r == 0 ? name : absl::StrCat(primary_name, "/replica_", r), shape,
                               dtype, init, o);
    if (!v.valid()) return Variable();
    if (r == 0) {
      primary_name =
          scope.name_scope().empty() ? v.name() : v.name().substr(scope.name_scope().size() + 1);
    }
    components.push_back(v);
    inits.push_back(v.initializer());
  }
  if (n == 1) return components[0];
  Operation all =
      ops::NoOp(scope.NewSubScope(name + "_initializer").WithControlDependencies(inits)).operation;
  return Variable::Mirrored(std::move(components), all);
}

std::vector<std::vector<Output>> MirroredStrategy::AllReduce(
    const Scope& scope, const std::vector<std::vector<Output>>& tensors,
    const std::vector<TensorShape>& shapes, ReduceOp op) {
  const int n = static_cast<int>(tensors.size());
  const size_t k_count = shapes.size();
  std::vector<std::vector<Output>> out(n, std::vector<Output>(k_count));
  const char* final_op = op == ReduceOp::kMean ? "Div" : "Id";
  // Buckets, filled from the end of the list: backprop computes the last
  // layer's gradients first, and each bucket's all-reduce starts as soon as
  // its own gradients exist, while the earlier layers' backprop goes on.
  // Per dtype, consecutive tensors share a bucket up to bytes_per_pack; a
  // tensor of at least bytes_per_pack bytes is a bucket alone.
  const int64_t cap = options_.bytes_per_pack;
  std::vector<std::vector<size_t>> packs;
  std::map<DataType, std::pair<size_t, int64_t>> open;  // dtype -> (index in packs, bytes)
  for (size_t k = k_count; k-- > 0;) {
    const DataType dt = tensors[0][k].type();
    const int64_t bytes = shapes[k].num_elements() * static_cast<int64_t>(DataTypeSize(dt));
    if (cap <= 0 || bytes >= cap) {
      open.erase(dt);  // later (earlier-layer) gradients start a new bucket
      packs.push_back({k});
      continue;
    }
    auto it = open.find(dt);
    if (it != open.end() && it->second.second + bytes <= cap) {
      packs[it->second.first].push_back(k);
      it->second.second += bytes;
    } else {
      open[dt] = {packs.size(), bytes};
      packs.push_back({k});
    }
  }
  for (const std::vector<size_t>& pack : packs) {
    const int instance = NextInstanceKey();
    for (int r = 0; r < n; ++r) {
      const Scope s = scope.WithDevice(replica_devices()[r]).NewSubScope("allreduce");
      if (pack.size() == 1) {
        out[r][pack[0]] =
            ops::CollectiveReduce(s, tensors[r][pack[0]], num_replicas_in_sync(), group_key(),
                                  instance, "Add", final_op, collective_timeout_seconds());
        continue;
      }
      std::vector<Output> flat;
      for (size_t k : pack) flat.push_back(ops::Reshape(s, tensors[r][k], {-1}).output);
      Output packed = ops::Concat(s, flat, 0).output;
      Output reduced =
          ops::CollectiveReduce(s, packed, num_replicas_in_sync(), group_key(), instance, "Add",
                                final_op, collective_timeout_seconds());
      int64_t offset = 0;
      for (size_t k : pack) {
        const int64_t size = shapes[k].num_elements();
        Output piece = ops::Slice(s, reduced, {offset}, {size}).output;
        Tensor dims(DT_INT32, TensorShape({shapes[k].dims()}));
        for (int d = 0; d < shapes[k].dims(); ++d) {
          dims.data<int32_t>()[d] = static_cast<int32_t>(shapes[k].dim_size(d));
        }
        out[r][k] = ops::Reshape(s, piece, ops::Const(s, dims)).output;
        offset += size;
      }
    }
  }
  return out;
}

absl::StatusOr<Operation> MirroredStrategy::Apply(const Scope& scope, const PendingUpdate& update) {
  const int n = static_cast<int>(update.grads.size());
  std::vector<size_t> live;  // variables with a gradient
  for (size_t k = 0; k < update.vars.size(); ++k) {
    int valid = 0;
    for (int r = 0; r < n; ++r) valid += update.grads[r][k].first.valid() ? 1 : 0;
    if (valid == n) {
      live.push_back(k);
    } else if (valid > 0 || (n > 1 && update.vars[k].components().empty())) {
      return errors::InvalidArgument(
          "variable '", update.vars[k].name(), "' has a gradient on ", valid, " of ", n,
          " replicas: use mirrored variables made in the strategy's scope, inside the step "
          "function (a variable read outside it, or one from TrainableVariables(), is the "
          "primary copy only)");
    }
  }
  std::vector<std::vector<Output>> grads(n);
  std::vector<TensorShape> shapes;
  for (size_t k : live) {
    shapes.push_back(update.vars[k].shape());
    for (int r = 0; r < n; ++r) grads[r].push_back(update.grads[r][k].first);
  }
  std::vector<std::vector<Output>> reduced = AllReduce(scope, grads, shapes, ReduceOp::kMean);
  std::vector<GradAndVar> all;
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < live.size(); ++i) {
      all.emplace_back(reduced[r][i], update.grads[r][live[i]].second);
    }
  }
  TG_RETURN_IF_ERROR(scope.status());
  return update.optimizer->ApplyGradients(scope, all, update.global_step);
}

Output MirroredStrategy::Reduce(const Scope& scope, ReduceOp op, const PerReplica& value) {
  const int n = static_cast<int>(replica_devices().size());
  if (static_cast<int>(value.values.size()) != n) return Strategy::Reduce(scope, op, value);
  if (num_replicas_in_sync() == 1) return Strategy::Reduce(scope, op, value);
  std::vector<std::vector<Output>> tensors(n);
  for (int r = 0; r < n; ++r) tensors[r].push_back(value.values[r]);
  // Shapes only matter for packing; one tensor is never packed.
  std::vector<std::vector<Output>> reduced = AllReduce(scope, tensors, {TensorShape({})}, op);
  // Every member's collective must run whenever the result is fetched.
  std::vector<Operation> others;
  for (int r = 1; r < n; ++r) others.push_back(reduced[r][0].op());
  return ops::Identity(scope.WithDevice(host_device()).WithControlDependencies(others),
                       reduced[0][0])
      .output;
}

// ---------------------------------------------------------------------------
// Fit

namespace {

// Keras's progress bar: "  120/937 [===>..........] - 12s - loss: 0.4512",
// redrawn in place at most twice a second. `total` < 0: unknown length.
class ProgressBar {
 public:
  explicit ProgressBar(int64_t total)
      : total_(total), start_(std::chrono::steady_clock::now()), last_(start_) {}

  void Update(std::ostream& out, int64_t step, double loss) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(500)) return;
    last_ = now;
    Draw(out, step, loss);
    out << std::flush;
  }
  // Ends the line, drawing the last state unless Update just did.
  void Finish(std::ostream& out, int64_t step, double loss) {
    if (drawn_ != step) Draw(out, step, loss);
    out << "\n";
    drawn_ = -1;
  }
  // Ends a drawn line as it is (a step failed: its error goes on a line of
  // its own).
  void Abandon(std::ostream& out) {
    if (drawn_ >= 0) out << "\n" << std::flush;
    drawn_ = -1;
  }

 private:
  void Draw(std::ostream& out, int64_t step, double loss) {
    drawn_ = step;
    constexpr int kWidth = 30;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (total_ > 0) {
      const int done = static_cast<int>(kWidth * std::min(step, total_) / total_);
      std::string bar(done, '=');
      if (done < kWidth) bar += '>';
      bar.resize(kWidth, '.');
      out << absl::StrFormat("\r%6d/%d [%s] - %.0fs - loss: %.4f", step, total_, bar, seconds,
                             loss);
    } else {
      out << absl::StrFormat("\r%6d/Unknown - %.0fs - loss: %.4f", step, seconds, loss);
    }
  }

  int64_t total_;
  int64_t drawn_ = -1;  // the step last drawn on the open line; -1: none open
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace

absl::StatusOr<FitHistory> Fit(Session* session, const DistributedDataset& data,
                               const Operation& train_op, const Output& loss,
                               const FitOptions& options) {
  if (session == nullptr) return errors::InvalidArgument("Fit: session is null");
  if (!train_op.valid() || !loss.valid()) {
    return errors::InvalidArgument("Fit: train_op and loss must be valid");
  }
  FitHistory history;
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    TG_ASSIGN_OR_RETURN(std::unique_ptr<DistributedDataset::Iterator> it, data.MakeIterator());
    const auto start = std::chrono::steady_clock::now();
    int64_t steps = 0, examples = 0;
    double sum = 0;
    FeedList feeds;
    std::vector<Tensor> out;
    int64_t total = data.cardinality();
    if (options.steps_per_epoch >= 0 && (total < 0 || options.steps_per_epoch < total)) {
      total = options.steps_per_epoch;
    }
    ProgressBar bar(total);
    auto failed = [&](absl::Status s) {
      if (options.progress_bar && options.log != nullptr) bar.Abandon(*options.log);
      return s;
    };
    while (options.steps_per_epoch < 0 || steps < options.steps_per_epoch) {
      bool end = false;
      if (absl::Status s = it->GetNextFeeds(&feeds, &end); !s.ok()) return failed(s);
      if (end) break;
      if (absl::Status s = session->Run(feeds, {loss.name()}, {train_op.name()}, &out); !s.ok()) {
        return failed(s);
      }
      const Tensor& l = out[0];
      if (l.NumElements() != 1 || (l.dtype() != DT_FLOAT && l.dtype() != DT_DOUBLE)) {
        return errors::InvalidArgument("Fit: loss ", loss.name(),
                                       " must be a float or double scalar, got ", l.DebugString());
      }
      sum += l.dtype() == DT_FLOAT ? l.scalar<float>() : l.scalar<double>();
      ++steps;
      examples += it->last_batch_size();
      if (options.progress_bar && options.log != nullptr) {
        bar.Update(*options.log, steps, sum / steps);
      }
    }
    if (steps == 0) {
      return errors::FailedPrecondition("Fit: epoch ", epoch, " had no batch to train on");
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    history.loss.push_back(sum / steps);
    history.steps += steps;
    if (options.log != nullptr) {
      if (options.progress_bar) bar.Finish(*options.log, steps, history.loss.back());
      *options.log << "epoch " << epoch << "/" << options.epochs << ": " << steps << " steps in "
                   << absl::StrFormat("%.1f", seconds) << " s, loss " << history.loss.back() << ", "
                   << static_cast<int64_t>(seconds > 0 ? examples / seconds : 0) << " examples/s"
                   << std::endl;
    }
  }
  return history;
}

}  // namespace distribute
}  // namespace tensorgrid
