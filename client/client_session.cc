#include "client/client_session.h"

#include <string>
#include <utility>

#include "core/platform/status.h"

namespace tensorgrid {

namespace {

SessionOptions WithTarget(const std::string& target) {
  SessionOptions options;
  options.target = target;
  return options;
}

absl::Status OfAnotherGraph(const char* what, const std::string& name) {
  return errors::InvalidArgument(what, " '", name,
                                 "' is a node of another graph (built from another root scope "
                                 "than this session's)");
}

// Names the node and the output where there is one.
absl::Status InvalidFetch(const Output& output) {
  if (!output.op().valid()) {
    return errors::InvalidArgument(
        "fetching an invalid Output (default-constructed or from a "
        "failed op)");
  }
  if (output.index() == Output::kNotSingleOutput) {
    return errors::InvalidArgument("fetching operation '", output.node_name(), "', which has ",
                                   output.op().num_outputs(),
                                   " outputs, as one; pick one with output(i)");
  }
  return errors::InvalidArgument("fetching output ", output.index(), " of '", output.node_name(),
                                 "', which has ", output.op().num_outputs(), " output(s)");
}

}  // namespace

ClientSession::ClientSession(const Scope& scope, const SessionOptions& options) : scope_(scope) {
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options);
  if (session.ok()) {
    session_ = std::move(session).value();
  } else {
    init_status_ = WithContext(session.status(), "creating a session");
  }
}

ClientSession::ClientSession(const Scope& scope, const std::string& target)
    : ClientSession(scope, WithTarget(target)) {}

ClientSession::~ClientSession() {
  if (session_ != nullptr) session_->Close().IgnoreError();
}

absl::Status ClientSession::MaybeExtendGraph() const {
  TG_RETURN_IF_ERROR(init_status_);
  TG_RETURN_IF_ERROR(scope_.status());
  absl::MutexLock lock(&mu_);
  const int num_nodes = scope_.num_nodes();
  if (created_ && num_nodes == last_num_nodes_) return absl::OkStatus();
  GraphDef graph;
  TG_RETURN_IF_ERROR(scope_.ToGraphDef(&graph, last_num_nodes_));
  TG_RETURN_IF_ERROR(created_ ? session_->Extend(graph) : session_->Create(graph));
  created_ = true;
  last_num_nodes_ = num_nodes;
  return absl::OkStatus();
}

absl::Status ClientSession::Run(const std::vector<Output>& fetch_outputs,
                                std::vector<Tensor>* outputs) const {
  return Run(FeedType(), fetch_outputs, {}, outputs);
}

absl::Status ClientSession::Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                                std::vector<Tensor>* outputs) const {
  return Run(inputs, fetch_outputs, {}, outputs);
}

absl::Status ClientSession::Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                                const std::vector<Operation>& run_outputs,
                                std::vector<Tensor>* outputs) const {
  return Run(RunOptions(), inputs, fetch_outputs, run_outputs, outputs, nullptr);
}

absl::Status ClientSession::Run(const RunOptions& run_options, const FeedType& inputs,
                                const std::vector<Output>& fetch_outputs,
                                const std::vector<Operation>& run_outputs,
                                std::vector<Tensor>* outputs, RunMetadata* run_metadata) const {
  TG_RETURN_IF_ERROR(MaybeExtendGraph());
  std::vector<std::pair<std::string, Tensor>> feeds;
  feeds.reserve(inputs.size());
  const uint64_t graph = scope_.graph_id();
  for (const auto& [output, value] : inputs) {
    if (!output.valid()) return errors::InvalidArgument("feeding an invalid Output");
    if (!output.op().MayBelongTo(graph)) return OfAnotherGraph("feed", output.name());
    TG_RETURN_IF_ERROR(WithContext(value.status, absl::StrCat("feed for ", output.name())));
    feeds.emplace_back(output.name(), value.tensor);
  }
  std::vector<std::string> fetch_names;
  fetch_names.reserve(fetch_outputs.size());
  for (const Output& output : fetch_outputs) {
    if (!output.valid()) return InvalidFetch(output);
    if (!output.op().MayBelongTo(graph)) return OfAnotherGraph("fetch", output.name());
    fetch_names.push_back(output.name());
  }
  std::vector<std::string> target_names;
  target_names.reserve(run_outputs.size());
  for (const Operation& op : run_outputs) {
    if (!op.valid()) return errors::InvalidArgument("running an invalid Operation");
    if (!op.MayBelongTo(graph)) return OfAnotherGraph("target", op.name());
    target_names.push_back(op.name());
  }
  return session_->Run(run_options, feeds, fetch_names, target_names, outputs, run_metadata);
}

absl::StatusOr<ClientSession::CallableHandle> ClientSession::MakeCallable(
    const CallableOptions& options) {
  TG_RETURN_IF_ERROR(MaybeExtendGraph());
  return session_->MakeCallable(options);
}

absl::Status ClientSession::RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                                        std::vector<Tensor>* fetches, RunMetadata* run_metadata) {
  TG_RETURN_IF_ERROR(init_status_);
  return session_->RunCallable(handle, feeds, fetches, run_metadata);
}

absl::Status ClientSession::ReleaseCallable(CallableHandle handle) {
  TG_RETURN_IF_ERROR(init_status_);
  return session_->ReleaseCallable(handle);
}

}  // namespace tensorgrid
