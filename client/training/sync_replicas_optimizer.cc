#include "client/training/sync_replicas_optimizer.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "client/client_session.h"
#include "client/node_builder.h"
#include "client/ops/array_ops.h"
#include "client/ops/data_flow_ops.h"
#include "client/ops/math_ops.h"
#include "client/ops/state_ops.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace training {

namespace {

constexpr char kWho[] = "SyncReplicasOptimizer";
// Bounds the chief's bookkeeping steps (closing the gate, tokens).
constexpr absl::Duration kControlTimeout = absl::Seconds(30);

bool IsRecoverable(const absl::Status& status) {
  return absl::IsAborted(status) || absl::IsUnavailable(status);
}

// What comes before "/task:" in a device name such as
// "/job:worker/replica:0/task:1" ("/job:worker/replica:0"), or "".
std::string TaskPrefixOf(const std::string& device) {
  const size_t task = device.find("/task:");
  if (device.rfind("/job:", 0) != 0 || task == std::string::npos) return "";
  return device.substr(0, task);
}

void Say(const std::string& line) { std::fprintf(stderr, "%s: %s\n", kWho, line.c_str()); }

RunOptions WithTimeout(absl::Duration timeout) {
  RunOptions options;
  if (timeout > absl::ZeroDuration()) {
    options.set_timeout_in_ms(std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout)));
  }
  return options;
}

}  // namespace

struct SyncReplicasOptimizer::Built {
  // A scope whose nodes go where `op` is: colocated with it and asking for
  // its device. (The placer colocates with a node absent from a step only by
  // name, so without the request a step without `op` would lose its device.)
  Scope Beside(const Scope& scope, const Operation& op) const {
    auto it = devices.find(op.name());
    return scope.WithDevice(it == devices.end() ? "" : it->second).ColocateWith(op);
  }

  bool built = false;
  int replicas_to_aggregate = 0;
  int total_num_replicas = 0;
  bool one_gradient_per_worker = false;
  bool workers_have_indexes = false;  // WorkerIndex given: errors name workers
  std::optional<Scope> chief_scope;   // Name()'s scope, without control dependencies
  Variable global_step;
  Output gate;
  Output token_queue;  // without one_gradient_per_worker (with it, workers await at the gate)
  Output local_step;  // this worker's, read
  std::vector<std::pair<Output, Variable>> accumulators;
  Operation chief_init, local_step_init;
  Output chief_init_step;  // the global step chief_init started from
  Output take;             // waits for a full step; the step completed
  Output aggregate;        // the new global step, after the update and its tokens
  Output state_step, state_committed, state_replicas, state_uncommitted;
  // This worker's device up to its task ("/job:worker/replica:0"), to name
  // the others; may be empty.
  std::string worker_prefix;
  Output close_code, close_message, close_epoch;
  Output chief_init_epoch;  // the gate's epoch chief_init opened it at
  Operation close;
  Operation poison_tokens, final_tokens;  // with a token queue
  // The requested devices of the global step, the variables and the local
  // step's anchor.
  std::map<std::string, std::string> devices;
};

namespace {

using Built = SyncReplicasOptimizer::Built;

// The global step read after `deps`, as int64, named `name`; beside the
// variable, so it is read when it runs.
Output ReadGlobalStep(const Built& g, const Scope& scope, const std::string& name,
                      const std::vector<Operation>& deps) {
  const Variable& var = g.global_step;
  const Scope s = g.Beside(scope, var.op()).WithControlDependencies(deps);
  const bool cast = var.dtype() != DT_INT64;
  const Scope read = s.WithOpName(name, cast ? "/read" : "");
  Output value = var.is_resource() ? Output(ops::ReadVariableOp(read, var.handle(), var.dtype()))
                                   : Output(ops::Identity(read, var.handle()));
  return cast ? Output(ops::Cast(s.WithOpName(name), value, DT_INT64)) : value;
}

// Enqueues `n` tokens of `value` (int64) into the token queue.
Operation EnqueueTokens(const Scope& scope, const std::string& name, const Built& g, int n,
                        const Input& value) {
  const Output tokens = ops::Fill(scope.WithOpName(name, "/values"), {n}, value);
  return ops::QueueEnqueueMany(scope.WithOpName(name), g.token_queue, {tokens}).operation;
}

absl::StatusOr<Operation> BuildInitTokens(Built& g, int num_tokens) {
  if (!g.built) {
    return errors::FailedPrecondition(kWho, ": the init tokens op needs ApplyGradients first");
  }
  const int needed = std::max(0, g.replicas_to_aggregate - g.total_num_replicas);
  if (num_tokens == -1) num_tokens = needed;
  if (g.one_gradient_per_worker && num_tokens != 0) {
    return errors::InvalidArgument(
        kWho, ": num_tokens ", num_tokens,
        " with OneGradientPerWorker: a worker waits at the gate for the chief's update, not for "
        "a token (a second gradient of a step would not count anyway); give -1 or 0");
  }
  if (num_tokens < needed) {
    return errors::InvalidArgument(
        kWho, ": num_tokens ", num_tokens, " is too few: ", g.replicas_to_aggregate,
        " replicas_to_aggregate from ", g.total_num_replicas, " total_num_replicas need at least ",
        needed, " to complete the first step");
  }
  const Scope scope = g.chief_scope->NewSubScope("init_tokens");
  Operation op;
  if (num_tokens == 0) {
    op = ops::NoOp(scope.WithOpName("none")).operation;
  } else {
    const Scope at_step = g.Beside(scope, g.global_step.op());
    op = EnqueueTokens(at_step, "enqueue", g, num_tokens,
                       ReadGlobalStep(g, scope, "global_step", {}));
  }
  TG_RETURN_IF_ERROR(scope.status());
  return op;
}

}  // namespace

SyncReplicasOptimizer::SyncReplicasOptimizer(Optimizer* optimizer, int replicas_to_aggregate,
                                             int total_num_replicas)
    : SyncReplicasOptimizer(optimizer, replicas_to_aggregate, total_num_replicas, Attrs()) {}

SyncReplicasOptimizer::SyncReplicasOptimizer(Optimizer* optimizer, int replicas_to_aggregate,
                                             int total_num_replicas, const Attrs& attrs)
    : optimizer_(optimizer),
      replicas_to_aggregate_(replicas_to_aggregate),
      total_num_replicas_(total_num_replicas == -1 ? replicas_to_aggregate : total_num_replicas),
      attrs_(attrs),
      built_(std::make_shared<Built>()) {}

SyncReplicasOptimizer::~SyncReplicasOptimizer() = default;

absl::StatusOr<std::vector<GradAndVar>> SyncReplicasOptimizer::ComputeGradients(
    const Scope& scope, const Output& loss, const std::vector<Variable>& var_list) const {
  if (optimizer_ == nullptr)
    return errors::InvalidArgument(kWho, ": the wrapped optimizer is null");
  return optimizer_->ComputeGradients(scope, loss, var_list);
}

absl::StatusOr<Operation> SyncReplicasOptimizer::Minimize(const Scope& scope, const Output& loss,
                                                          const std::vector<Variable>& var_list,
                                                          const Variable& global_step) {
  TG_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads_and_vars,
                      ComputeGradients(scope, loss, var_list));
  return ApplyGradients(scope, grads_and_vars, global_step);
}

absl::Status SyncReplicasOptimizer::CheckAttrs() const {
  if (optimizer_ == nullptr)
    return errors::InvalidArgument(kWho, ": the wrapped optimizer is null");
  if (replicas_to_aggregate_ < 1 || total_num_replicas_ < 1) {
    return errors::InvalidArgument(kWho, ": replicas_to_aggregate (", replicas_to_aggregate_,
                                   ") and total_num_replicas (", total_num_replicas_,
                                   ") must be at least 1");
  }
  const std::optional<int>& index = attrs_.worker_index_;
  if (index.has_value() && (*index < 0 || *index >= total_num_replicas_)) {
    return errors::InvalidArgument(kWho, ": WorkerIndex ", *index, " is not in [0, ",
                                   total_num_replicas_, ") (total_num_replicas)");
  }
  if (attrs_.one_gradient_per_worker_) {
    if (!index.has_value()) {
      return errors::InvalidArgument(kWho,
                                     ": OneGradientPerWorker needs this worker's "
                                     "WorkerIndex (its task index)");
    }
    if (replicas_to_aggregate_ > total_num_replicas_) {
      return errors::InvalidArgument(kWho, ": with OneGradientPerWorker, replicas_to_aggregate (",
                                     replicas_to_aggregate_, ") cannot exceed total_num_replicas (",
                                     total_num_replicas_, ")");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Operation> SyncReplicasOptimizer::ApplyGradients(
    const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
    const Variable& global_step) {
  TG_RETURN_IF_ERROR(scope.status());
  if (built_->built) {
    return errors::FailedPrecondition(kWho, ": ApplyGradients may be called only once");
  }
  TG_RETURN_IF_ERROR(CheckAttrs());
  if (!global_step.valid() ||
      (global_step.dtype() != DT_INT64 && global_step.dtype() != DT_INT32) ||
      global_step.shape().dims() != 0) {
    return errors::InvalidArgument(kWho,
                                   ": needs the global step, an int32 or int64 scalar "
                                   "variable (GetOrCreateGlobalStep)");
  }
  std::vector<GradAndVar> to_apply;
  std::set<std::string> seen;
  for (const auto& [grad, var] : grads_and_vars) {
    if (!var.valid())
      return errors::InvalidArgument(kWho, ": an invalid variable in the gradient list");
    if (!seen.insert(var.name()).second) {
      return errors::InvalidArgument(kWho, ": variable '", var.name(),
                                     "' appears twice in the gradient list");
    }
    if (!grad.valid()) continue;
    if ((var.dtype() != DT_FLOAT && var.dtype() != DT_DOUBLE) ||
        RemoveRefType(grad.type()) != var.dtype()) {
      return errors::InvalidArgument(kWho, ": the gradient '", grad.name(), "' for variable '",
                                     var.name(), "' is ", DataTypeString(grad.type()),
                                     ", the variable ", DataTypeString(var.dtype()),
                                     "; both must be float or double alike");
    }
    to_apply.push_back({grad, var});
  }
  if (to_apply.empty()) {
    return errors::InvalidArgument(kWho, ": no gradients provided for any variable");
  }

  Built& g = *built_;
  g.replicas_to_aggregate = replicas_to_aggregate_;
  g.total_num_replicas = total_num_replicas_;
  g.one_gradient_per_worker = attrs_.one_gradient_per_worker_;
  g.workers_have_indexes = attrs_.worker_index_.has_value();
  g.global_step = global_step;
  const std::string name = attrs_.name_.value_or("sync_replicas");
  const Scope sync = scope.NewSubScope(name);
  // The chief's ops run in steps of their own: no caller's control dependencies.
  const Scope chief = sync.WithNoControlDependencies();
  g.chief_scope = chief;

  // This worker's local step goes beside a NoOp, which device functions
  // place on the worker (a variable would go to a ps), as TensorFlow does.
  const Operation anchor = ops::NoOp(chief.WithOpName("local_step_anchor")).operation;
  GraphDef built;
  TG_RETURN_IF_ERROR(scope.ToGraphDef(&built));
  std::set<std::string> placed = {global_step.name(), anchor.name()};
  for (const auto& [grad, var] : to_apply) placed.insert(var.name());
  for (const NodeDef& node : built.node()) {
    if (placed.count(node.name()) > 0) g.devices[node.name()] = node.device();
  }
  g.worker_prefix = TaskPrefixOf(g.devices[anchor.name()]);
  // Not a variable (a Saver would save it, and a non-chief would wait for
  // the chief to initialize it): a SyncReplicasLocalStep reads -1 until set.
  const Scope at_worker = g.Beside(chief, anchor);
  const Output local = Output(
      NodeBuilder(at_worker.WithOpName("local_step"), "SyncReplicasLocalStep").Finalize(), 0);
  g.local_step =
      Output(NodeBuilder(at_worker.WithOpName("local_step/read"), "SyncReplicasLocalStepRead")
                 .Input(local)
                 .Finalize(),
             0);
  auto set_local_step = [&](const Scope& scope, const std::string& name, const Output& step) {
    return NodeBuilder(g.Beside(scope, anchor).WithOpName(name), "SyncReplicasLocalStepAssign")
        .Input(local)
        .Input(step)
        .Finalize();
  };

  // Beside the global step: the gate and the token queue, shared by name.
  const Scope at_step = g.Beside(chief, global_step.op());
  g.gate = Output(NodeBuilder(at_step.WithOpName("gate"), "SyncReplicasGate")
                      .Attr("replicas_to_aggregate", static_cast<int64_t>(replicas_to_aggregate_))
                      .Attr("one_per_replica", attrs_.one_gradient_per_worker_)
                      .Attr("shared_name", name + "/gate")
                      .Finalize(),
                  0);
  const bool tokens = !attrs_.one_gradient_per_worker_;
  if (tokens) {
    g.token_queue =
        ops::FIFOQueue(
            at_step.WithOpName("token_queue"), {DT_INT64},
            ops::FIFOQueue::Shapes({PartialTensorShape({})}).SharedName(name + "/token_queue"))
            .handle;
  }

  // Per variable, beside it: an accumulator for its gradients.
  for (const auto& [grad, var] : to_apply) {
    const std::string shared = var.name() + "/grad_accum";
    g.accumulators.emplace_back(
        ops::ConditionalAccumulator(g.Beside(chief, var.op()).WithOpName(shared), var.dtype(),
                                    PartialTensorShape(var.shape().dim_sizes()),
                                    ops::ConditionalAccumulator::SharedName(shared))
            .handle,
        var);
  }
  TG_RETURN_IF_ERROR(scope.status());

  // The train op: admit (a ticket), apply to every accumulator under it,
  // commit it (only now does the gradient count), wait for the chief's
  // update: a token, or with one gradient per worker the gate's release of
  // a step after this one (a faster worker could take this one's token, and
  // its own second gradient would not count: both would wait for ever).
  const Output local_step = Output(
      NodeBuilder(g.Beside(sync, anchor).WithOpName("read_local_step"), "SyncReplicasLocalStepRead")
          .Input(local)
          .Finalize(),
      0);
  const Operation admit =
      NodeBuilder(g.Beside(sync, global_step.op()).WithOpName("admit"), "SyncReplicasGateAdmit")
          .Input(g.gate)
          .Input(static_cast<int32_t>(attrs_.worker_index_.value_or(-1)))
          .Input(local_step)
          .Finalize();
  const Output admitted_step(admit, 0), ticket(admit, 1);
  std::vector<Operation> applies;
  for (size_t i = 0; i < to_apply.size(); ++i) {
    const auto& [grad, var] = to_apply[i];
    applies.push_back(
        NodeBuilder(g.Beside(sync, var.op()).WithOpName(var.name(), "/apply_to_accumulator"),
                    "ResourceAccumulatorApplyTicketedGradient")
            .Input(g.accumulators[i].first)
            .Input(admitted_step)
            .Input(ticket)
            .Input(grad)
            .Finalize());
  }
  const Operation commit =
      NodeBuilder(
          g.Beside(sync.WithControlDependencies(applies), global_step.op()).WithOpName("commit"),
          "SyncReplicasGateCommit")
          .Input(g.gate)
          .Input(ticket)
          .Finalize();
  const Scope after_commit =
      g.Beside(sync.WithControlDependencies({commit}), global_step.op()).WithOpName("token");
  const Output token = tokens ? ops::QueueDequeue(after_commit, g.token_queue, {DT_INT64})[0]
                              : Output(NodeBuilder(after_commit, "SyncReplicasGateAwait")
                                           .Input(g.gate)
                                           .Input(local_step)
                                           .Finalize(),
                                       0);
  const Operation train = set_local_step(sync, "train", token);
  TG_RETURN_IF_ERROR(scope.status());

  // The chief's aggregation, in two steps: wait for a full step (take), then
  // the means of the gradients the gate counted, applied; then the tokens.
  g.take = Output(
      NodeBuilder(at_step.WithOpName("take"), "SyncReplicasGateTake").Input(g.gate).Finalize(), 0);
  const Operation taken =
      NodeBuilder(at_step.WithOpName("taken"), "SyncReplicasGateTaken").Input(g.gate).Finalize();
  std::vector<GradAndVar> means;
  for (const auto& [acc, var] : g.accumulators) {
    means.emplace_back(Output(NodeBuilder(g.Beside(chief, var.op()).WithOpName(var.name(), "/mean"),
                                          "ResourceAccumulatorTakeTicketedGradients")
                                  .Input(acc)
                                  .Input(Output(taken, 0))
                                  .Input(Output(taken, 1))
                                  .Attr("dtype", var.dtype())
                                  .Finalize(),
                              0),
                       var);
  }
  TG_RETURN_IF_ERROR(scope.status());
  TG_ASSIGN_OR_RETURN(
      const Operation update,
      optimizer_->ApplyGradients(scope.WithNoControlDependencies(), means, global_step));
  const Output new_step = ReadGlobalStep(g, chief, "new_global_step", {update});
  const int tokens_per_step = std::max(total_num_replicas_, replicas_to_aggregate_);
  const Operation release =
      tokens ? EnqueueTokens(at_step, "tokens", g, tokens_per_step, new_step)
             : NodeBuilder(at_step.WithOpName("release"), "SyncReplicasGateRelease")
                   .Input(g.gate)
                   .Input(new_step)
                   .Finalize();
  g.aggregate =
      ops::Identity(at_step.WithControlDependencies({release}).WithOpName("aggregate"), new_step);

  // Start-up: the accumulators' global step and the local step, then the gate.
  g.chief_init_step = ReadGlobalStep(g, chief, "chief_init_global_step", {});
  std::vector<Operation> set_steps;
  for (const auto& [acc, var] : g.accumulators) {
    set_steps.push_back(ops::AccumulatorSetGlobalStep(
        g.Beside(chief, var.op()).WithOpName(var.name(), "/set_global_step"), acc,
        g.chief_init_step));
  }
  const Operation open = NodeBuilder(at_step.WithControlDependencies(set_steps).WithOpName("open"),
                                     "SyncReplicasGateOpen")
                             .Input(g.gate)
                             .Input(g.chief_init_step)
                             .Finalize();
  const Operation set_local = set_local_step(chief, "chief_init_local_step", g.chief_init_step);
  g.chief_init =
      ops::NoOp(chief.WithControlDependencies({open, set_local}).WithOpName("chief_init"))
          .operation;
  g.chief_init_epoch = Output(open, 0);
  g.local_step_init = set_local_step(chief, "local_step_init",
                                     ReadGlobalStep(g, chief, "local_step_init_global_step", {}));

  // The chief's controls: the gate's state, closing it, tokens that wake every worker.
  const Operation state = NodeBuilder(at_step.WithOpName("gate_state"), "SyncReplicasGateState")
                              .Input(g.gate)
                              .Finalize();
  g.state_step = Output(state, 0);
  g.state_committed = Output(state, 1);
  g.state_replicas = Output(state, 2);
  g.state_uncommitted = Output(state, 3);
  g.close_code = ops::Placeholder(chief.WithOpName("close_code"), DT_INT32);
  g.close_message = ops::Placeholder(chief.WithOpName("close_message"), DT_STRING);
  g.close_epoch = ops::Placeholder(chief.WithOpName("close_epoch"), DT_INT64);
  g.close = NodeBuilder(at_step.WithOpName("close"), "SyncReplicasGateClose")
                .Input(g.gate)
                .Input(g.close_code)
                .Input(g.close_message)
                .Input(g.close_epoch)
                .Finalize();
  // Waits for a token need tokens to end; closing the gate ends waits at it.
  if (tokens) {
    g.poison_tokens = EnqueueTokens(at_step, "wake_tokens", g, total_num_replicas_, int64_t{-1});
    g.final_tokens = EnqueueTokens(at_step, "final_tokens", g, total_num_replicas_,
                                   ReadGlobalStep(g, chief, "final_global_step", {}));
  }
  TG_RETURN_IF_ERROR(scope.status());
  g.built = true;
  return train;
}

absl::StatusOr<Operation> SyncReplicasOptimizer::GetInitTokensOp(int num_tokens) {
  return BuildInitTokens(*built_, num_tokens);
}

Operation SyncReplicasOptimizer::chief_init_op() const { return built_->chief_init; }
Operation SyncReplicasOptimizer::local_step_init_op() const { return built_->local_step_init; }
Output SyncReplicasOptimizer::local_step() const { return built_->local_step; }

// ------------------------------------------------------------------- the hook

namespace {

// On the chief: initializes the accumulators and the gate, puts the initial
// tokens in, and runs the aggregation loop on a thread of its own; on the
// others: sets the local step. See docs/sync_replicas.md.
class SyncReplicasHook final : public SessionRunHook {
 public:
  SyncReplicasHook(std::shared_ptr<Built> built, bool is_chief, SyncReplicasHookOptions options)
      : built_(std::move(built)), is_chief_(is_chief), options_(std::move(options)) {}
  ~SyncReplicasHook() override;

  absl::Status Begin(const Scope& scope) override;
  absl::Status AfterCreateSession(ClientSession& session) override;
  absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) override;
  absl::Status End(ClientSession& session) override;

 private:
  // The loop: per step, wait for a full step (phase 1), then apply it (phase 2).
  void Loop(ClientSession* session, int64_t step);
  // Records `status` and, unless a new session may cure it, closes the gate
  // with it and wakes every worker waiting for a token.
  void Fail(ClientSession& session, absl::Status status);
  // After the wait for `step` timed out: true if the step was completed just
  // then, false if it is full (a take completes it at once), else
  // DeadlineExceeded saying how many gradients arrived and naming the
  // workers that sent none.
  absl::StatusOr<bool> MissingGradients(ClientSession& session, int64_t step);
  // Closes the gate at this hook's opening (epoch_) with `reason`: false if
  // a newer chief has reopened it since, which the close then leaves alone.
  absl::StatusOr<bool> CloseGate(ClientSession& session, const absl::Status& reason);
  // Stops the loop (closing the gate with `reason` if it still runs) and joins it.
  void StopLoop(ClientSession* session, const absl::Status& reason);
  bool stopping() const {
    absl::MutexLock lock(&mu_);
    return stop_;
  }

  const std::shared_ptr<Built> built_;
  const bool is_chief_;
  const SyncReplicasHookOptions options_;
  std::optional<Scope> scope_;
  Operation init_tokens_;

  // The loop's session: own_session_, or the MonitoredTrainingSession's.
  std::unique_ptr<ClientSession> own_session_;
  ClientSession* loop_session_ = nullptr;
  int64_t start_step_ = 0;
  // The gate's epoch at this hook's opening: set before the loop starts,
  // read by it and by End (-1 until then: closes whatever opening).
  int64_t epoch_ = -1;
  bool start_pending_ = false;
  std::thread thread_;

  // Held while the gate is closed (Fail, End, StopLoop): the first reason stays.
  absl::Mutex control_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool loop_done_ ABSL_GUARDED_BY(mu_) = true;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
};

SyncReplicasHook::~SyncReplicasHook() {
  if (!thread_.joinable()) return;
  // End never ran (the session was never finished); the loop's own session
  // can still close the gate. Without one the loop ends with its step's timeout.
  StopLoop(own_session_.get(),
           errors::Cancelled(kWho, ": the chief's hook was destroyed before End"));
}

absl::Status SyncReplicasHook::Begin(const Scope& scope) {
  if (!built_->built) {
    return errors::FailedPrecondition(kWho,
                                      ": ApplyGradients (or Minimize) must build the train "
                                      "op before the session is created");
  }
  if (options_.aggregation_timeout < absl::ZeroDuration()) {
    return errors::InvalidArgument(kWho, ": aggregation_timeout must not be negative");
  }
  scope_ = scope;
  if (is_chief_) {
    TG_ASSIGN_OR_RETURN(init_tokens_, BuildInitTokens(*built_, options_.num_tokens));
  }
  return absl::OkStatus();
}

absl::Status SyncReplicasHook::AfterCreateSession(ClientSession& session) {
  const Built& g = *built_;
  if (!is_chief_) {
    return WithContext(session.Run({}, {}, {g.local_step_init}, nullptr),
                       absl::StrCat(kWho, ": setting the local step"));
  }
  // A new session after a failure: the old loop goes first.
  if (thread_.joinable()) {
    StopLoop(&session, errors::Aborted(kWho, ": the chief is recreating its session"));
  }
  {
    absl::MutexLock lock(&mu_);
    stop_ = false;
    failure_ = absl::OkStatus();
  }
  own_session_.reset();
  loop_session_ = &session;
  if (!options_.master.empty()) {
    SessionOptions session_options;
    session_options.target = options_.master;
    session_options.config = options_.config;
    own_session_ = std::make_unique<ClientSession>(*scope_, session_options);
    loop_session_ = own_session_.get();
  }
  std::vector<Tensor> out;
  TG_RETURN_IF_ERROR(
      WithContext(session.Run({}, {g.chief_init_step, g.chief_init_epoch}, {g.chief_init}, &out),
                  absl::StrCat(kWho, ": initializing the chief")));
  start_step_ = out[0].scalar<int64_t>();
  epoch_ = out[1].scalar<int64_t>();
  TG_RETURN_IF_ERROR(WithContext(session.Run({}, {}, {init_tokens_}, nullptr),
                                 absl::StrCat(kWho, ": putting the initial tokens in")));
  // A gate opened before (its task outlived a failure or a chief; a
  // restarted task has a new gate) may have workers waiting for a token
  // from then: they would wait for ever, since the reopened step needs their
  // gradients. A token each, of the global step now, sends them on from
  // there (a spare one lets a worker run a step ahead, as initial tokens
  // do). With one gradient per worker, reopening the gate ended their waits.
  if (epoch_ > 1 && g.final_tokens.valid()) {
    TG_RETURN_IF_ERROR(WithContext(session.Run({}, {}, {g.final_tokens}, nullptr),
                                   absl::StrCat(kWho, ": waking the workers of the old session")));
  }
  // The loop starts with the first step, so that a session that fails to
  // come up never leaves it running.
  start_pending_ = true;
  return absl::OkStatus();
}

absl::Status SyncReplicasHook::BeforeRun(SessionRunContext& context, SessionRunArgs* args) {
  if (!is_chief_) return absl::OkStatus();
  {
    absl::MutexLock lock(&mu_);
    if (!failure_.ok()) return failure_;
  }
  if (start_pending_) {
    start_pending_ = false;
    {
      absl::MutexLock lock(&mu_);
      loop_done_ = false;
    }
    thread_ = std::thread([this, session = loop_session_, step = start_step_] {
      Loop(session, step);
      absl::MutexLock lock(&mu_);
      loop_done_ = true;
    });
  }
  return absl::OkStatus();
}

absl::Status SyncReplicasHook::End(ClientSession& session) {
  if (!is_chief_) return absl::OkStatus();
  start_pending_ = false;
  const absl::Status over = errors::OutOfRange(
      kWho,
      ": the chief has stopped aggregating gradients (its session is closing); no more "
      "steps");
  // Closing the gate also ends the loop's wait for gradients (stopping first,
  // so that the loop takes that for the end, not for a failure). A loop that
  // failed first has closed the gate with its reason, which then stays.
  absl::StatusOr<bool> closed;
  {
    absl::MutexLock control(&control_mu_);
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    closed = CloseGate(session, over);
  }
  absl::Status status = closed.status();
  if (thread_.joinable()) StopLoop(nullptr, over);
  bool failed;
  {
    absl::MutexLock lock(&mu_);
    failed = !failure_.ok();
    if (failed) status = failure_;
  }
  // Workers waiting for a token finish their step; their next one fails at
  // the gate. (After a failure the tokens may be spare, and do no harm.)
  // Workers waiting at the gate failed with its closing. A newer chief's
  // gate needs no tokens from this one.
  if (built_->final_tokens.valid() && closed.value_or(true)) {
    absl::Status last = WithContext(
        session.Run(WithTimeout(kControlTimeout), {}, {}, {built_->final_tokens}, nullptr, nullptr),
        absl::StrCat(kWho, ": putting the last tokens in"));
    if (!failed) status.Update(last);
  }
  own_session_.reset();
  loop_session_ = nullptr;
  return status;
}

void SyncReplicasHook::StopLoop(ClientSession* session, const absl::Status& reason) {
  {
    absl::MutexLock control(&control_mu_);
    bool running;
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
      running = !loop_done_;
    }
    // Closing the gate fails the loop's wait for gradients. A loop in the
    // middle of applying a step finishes it (bounded by aggregation_timeout).
    if (session != nullptr && running) {
      absl::StatusOr<bool> closed = CloseGate(*session, reason);
      if (!closed.ok()) {
        Say(absl::StrCat("stopping the aggregation loop: ", closed.status().ToString()));
      }
    }
  }
  thread_.join();
}

absl::StatusOr<bool> SyncReplicasHook::CloseGate(ClientSession& session,
                                                 const absl::Status& reason) {
  const Built& g = *built_;
  ClientSession::FeedType feeds;
  feeds.emplace(g.close_code, Tensor::Scalar<int32_t>(static_cast<int32_t>(reason.code())));
  feeds.emplace(g.close_message, Tensor::Scalar<std::string>(std::string(reason.message())));
  feeds.emplace(g.close_epoch, Tensor::Scalar<int64_t>(epoch_));
  std::vector<Tensor> out;
  TG_RETURN_IF_ERROR(
      WithContext(session.Run(WithTimeout(kControlTimeout), feeds, {g.close}, {}, &out, nullptr),
                  absl::StrCat(kWho, ": closing the gate")));
  return out[0].scalar<bool>();
}

void SyncReplicasHook::Loop(ClientSession* session, int64_t step) {
  const Built& g = *built_;
  const RunOptions run_options = WithTimeout(options_.aggregation_timeout);
  while (!stopping()) {
    std::vector<Tensor> out;
    absl::Status status = session->Run(run_options, {}, {g.take}, {}, &out, nullptr);
    if (!status.ok()) {
      if (stopping()) return;
      if (!absl::IsDeadlineExceeded(status)) {
        return Fail(*session, WithContext(status, absl::StrCat(kWho,
                                                               ": waiting for the gradients "
                                                               "of global step ",
                                                               step)));
      }
      absl::StatusOr<bool> taken = MissingGradients(*session, step);
      if (!taken.ok()) return Fail(*session, taken.status());
      if (!*taken) continue;  // it filled up just as the deadline passed
    }
    status = session->Run(run_options, {}, {g.aggregate}, {}, &out, nullptr);
    if (!status.ok()) {
      return Fail(*session, WithContext(status, absl::StrCat(kWho,
                                                             ": applying the gradients of "
                                                             "global step ",
                                                             step)));
    }
    step = out[0].scalar<int64_t>();
  }
}

absl::StatusOr<bool> SyncReplicasHook::MissingGradients(ClientSession& session, int64_t step) {
  const Built& g = *built_;
  std::vector<Tensor> out;
  absl::Status read = session.Run(
      WithTimeout(kControlTimeout), {},
      {g.state_step, g.state_committed, g.state_replicas, g.state_uncommitted}, {}, &out, nullptr);
  // The gate's task cannot be reached (frozen, restarting): that, not a
  // missing worker, is why the step did not fill. Recoverable: the chief
  // recreates its session, and the workers are not told to stop.
  if (IsRecoverable(read)) {
    return WithContext(read, absl::StrCat(kWho,
                                          ": reading the gate's state after waiting for "
                                          "the gradients of global step ",
                                          step));
  }
  // Without an aggregation_timeout, the session's operation_timeout_in_ms ended the wait.
  const std::string within = options_.aggregation_timeout > absl::ZeroDuration()
                                 ? absl::StrCat(absl::FormatDuration(options_.aggregation_timeout),
                                                " (aggregation_timeout)")
                                 : "the step timeout (ConfigProto.operation_timeout_in_ms)";
  std::string arrived = "not known";
  std::string workers, named;
  if (read.ok()) {
    if (out[0].scalar<int64_t>() > step) return true;
    const int32_t committed = out[1].scalar<int32_t>();
    if (committed >= g.replicas_to_aggregate) return false;
    arrived = absl::StrCat(committed);
    auto ints = [](const Tensor& t) {
      return std::vector<int32_t>(t.data<int32_t>(), t.data<int32_t>() + t.NumElements());
    };
    const std::vector<int32_t> from = ints(out[2]), uncommitted = ints(out[3]);
    auto has = [](const std::vector<int32_t>& v, int32_t w) {
      return std::find(v.begin(), v.end(), w) != v.end();
    };
    if (!from.empty() || !uncommitted.empty() || g.workers_have_indexes) {
      std::vector<int32_t> missing;
      for (int32_t w = 0; w < g.total_num_replicas; ++w) {
        if (!has(from, w)) missing.push_back(w);
      }
      workers = absl::StrCat("; from workers [", absl::StrJoin(from, ", "), "], none from [",
                             absl::StrJoin(missing, ", "), "]");
      for (int32_t w : missing) {
        absl::StrAppend(&named, ". Worker ", w);
        if (!g.worker_prefix.empty()) {
          absl::StrAppend(&named, " (", g.worker_prefix, "/task:", w, ")");
        }
        absl::StrAppend(&named, " sent no gradient for global step ", step, " within ", within);
        if (has(uncommitted, w)) {
          absl::StrAppend(&named,
                          ": it was admitted at the gate, but its gradient never reached every "
                          "accumulator");
        }
      }
    }
  } else {
    workers = absl::StrCat(" (the gate's state could not be read: ", read.message(), ")");
  }
  return errors::DeadlineExceeded(
      kWho, ": gradients from some workers are missing: ", arrived, " of ", g.replicas_to_aggregate,
      " gradients for global step ", step, " arrived within ", within, workers,
      "; total_num_replicas ", g.total_num_replicas, named, ". A worker may have died or stalled");
}

void SyncReplicasHook::Fail(ClientSession& session, absl::Status status) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());  // the message names kWho
  absl::MutexLock control(&control_mu_);
  // The workers learn first (unless the chief is stopping the loop, and has
  // closed the gate already), so that whatever the chief does on seeing the
  // failure comes after. A task that restarted or cannot be reached needs no
  // telling: the MonitoredTrainingSession recreates its session, and the hook
  // starts a new loop.
  if (!stopping() && !IsRecoverable(status)) {
    absl::StatusOr<bool> closed = CloseGate(session, status);
    absl::Status told = closed.status();
    // Tokens only for workers of this opening: a newer chief reopened a
    // gate this close left alone.
    if (closed.value_or(false) && built_->poison_tokens.valid()) {
      told = session.Run(WithTimeout(kControlTimeout), {}, {}, {built_->poison_tokens}, nullptr,
                         nullptr);
    }
    if (!told.ok()) Say(absl::StrCat("could not tell the workers: ", told.ToString()));
  }
  absl::MutexLock lock(&mu_);
  failure_ = status;
}

}  // namespace

std::shared_ptr<SessionRunHook> SyncReplicasOptimizer::MakeSessionRunHook(
    bool is_chief, SyncReplicasHookOptions options) {
  return std::make_shared<SyncReplicasHook>(built_, is_chief, std::move(options));
}

}  // namespace training
}  // namespace tensorgrid
