#include "client/training/summary_saver_hook.h"

#include <algorithm>

#include "core/framework/types.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace training {

namespace {

constexpr char kWho[] = "SummarySaverHook";

absl::StatusOr<double> ScalarValue(const std::string& tag, const Tensor& value) {
  if (value.NumElements() == 1) {
    switch (value.dtype()) {
      case DT_FLOAT: return value.scalar<float>();
      case DT_DOUBLE: return value.scalar<double>();
      case DT_INT32: return value.scalar<int32_t>();
      case DT_INT64: return static_cast<double>(value.scalar<int64_t>());
      default: break;
    }
  }
  return errors::InvalidArgument(kWho, ": '", tag, "' is a ", DataTypeString(value.dtype()),
                                 " tensor of shape ", value.shape().DebugString(),
                                 ", not a float, double, int32 or int64 scalar");
}

}  // namespace

SummarySaverHook::SummarySaverHook(SummarySaverHookOptions options)
    : options_(std::move(options)), timer_(options_.save_steps, options_.save_secs) {}

absl::Status SummarySaverHook::Begin(const Scope& scope) {
  TG_RETURN_IF_ERROR(CheckExactlyOne(kWho, options_.save_steps, options_.save_secs));
  for (const auto& [tag, output] : options_.scalars) {
    if (tag.empty() || !output.valid()) {
      return errors::InvalidArgument(kWho, ": a scalar needs a tag and a valid Output ('", tag,
                                     "')");
    }
  }
  TG_ASSIGN_OR_RETURN(global_step_, FindGlobalStep(kWho, scope));
  scope_ = scope;
  writer_ = options_.writer;
  if (writer_ == nullptr) {
    if (options_.output_dir.empty()) {
      return errors::InvalidArgument(kWho, ": give a writer or an output_dir");
    }
    TG_ASSIGN_OR_RETURN(std::unique_ptr<SummaryWriter> writer,
                        SummaryWriter::Create(options_.output_dir));
    writer_ = std::move(writer);
    own_writer_ = true;
  }
  return absl::OkStatus();
}

absl::Status SummarySaverHook::AfterCreateSession(ClientSession& session) {
  TG_ASSIGN_OR_RETURN(int64_t step, ReadGlobalStep(session, global_step_));
  last_step_ = step;
  if (options_.write_graph && !graph_written_) {
    GraphDef graph;
    TG_RETURN_IF_ERROR(scope_->ToGraphDef(&graph));
    TG_RETURN_IF_ERROR(writer_->AddGraph(graph));
    graph_written_ = true;
  }
  return absl::OkStatus();
}

absl::Status SummarySaverHook::BeforeRun(SessionRunContext& context, SessionRunArgs* args) {
  writing_ = !last_step_.has_value() || timer_.ShouldTriggerForStep(*last_step_ + 1);
  args->fetches.push_back(global_step_.value());
  if (writing_) {
    for (const auto& scalar : options_.scalars) args->fetches.push_back(scalar.second);
  }
  return absl::OkStatus();
}

absl::Status SummarySaverHook::AfterRun(SessionRunContext& context,
                                        const SessionRunValues& values) {
  TG_ASSIGN_OR_RETURN(int64_t fetched, GlobalStepValue(values.results[0]));
  last_step_ = std::max(last_step_.value_or(0) + 1, fetched);
  if (!writing_) return absl::OkStatus();
  TG_ASSIGN_OR_RETURN(int64_t step, ReadGlobalStep(context.session(), global_step_));
  last_step_ = step;
  return Write(values.results, step);
}

absl::Status SummarySaverHook::Write(const std::vector<Tensor>& values, int64_t step) {
  std::vector<std::pair<std::string, double>> scalars;
  for (size_t i = 0; i < options_.scalars.size(); ++i) {
    const std::string& tag = options_.scalars[i].first;
    TG_ASSIGN_OR_RETURN(double value, ScalarValue(tag, values[i + 1]));
    scalars.emplace_back(tag, value);
  }
  const auto elapsed = timer_.UpdateLastTriggeredStep(step);
  if (options_.steps_per_sec && elapsed.has_value() && elapsed->first > absl::ZeroDuration()) {
    scalars.emplace_back("global_step/sec",
                         elapsed->second / absl::ToDoubleSeconds(elapsed->first));
  }
  if (scalars.empty()) return absl::OkStatus();
  return writer_->AddScalars(scalars, step);
}

absl::Status SummarySaverHook::End(ClientSession& session) {
  if (writer_ == nullptr) return absl::OkStatus();
  return own_writer_ ? writer_->Close() : writer_->Flush();
}

}  // namespace training
}  // namespace tensorgrid
