// TfConfig: TF_CONFIG parsing (with protobuf's JSON parser into a
// google.protobuf.Value), printing and TensorFlow's chief rule.
#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/platform/json.h"
#include "core/platform/status.h"
#include "distributed/cluster_spec.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace tensorgrid {
namespace {

using google::protobuf::Value;

// `value` as compact JSON, to quote it in an error message.
std::string ValueJson(const Value& value) {
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(value, &out).ok()) return "<unprintable>";
  return out;
}

const char* KindName(const Value& value) {
  switch (value.kind_case()) {
    case Value::kNullValue: return "null";
    case Value::kNumberValue: return "a number";
    case Value::kStringValue: return "a string";
    case Value::kBoolValue: return "a boolean";
    case Value::kStructValue: return "an object";
    case Value::kListValue: return "an array";
    default: return "empty";
  }
}

absl::Status WrongType(absl::string_view what, absl::string_view want, const Value& got) {
  return errors::InvalidArgument(what, " must be ", want, ", got ", KindName(got), " ",
                                 ValueJson(got));
}

absl::StatusOr<ClusterSpec> ParseCluster(const Value& cluster, const ClusterSpecOptions& options) {
  if (cluster.kind_case() != Value::kStructValue) {
    return WrongType("\"cluster\"", "an object of job name -> [\"host:port\", ...]", cluster);
  }
  ClusterSpec::JobMap jobs;
  for (const auto& [job, tasks] : cluster.struct_value().fields()) {
    std::string where = absl::StrCat("\"cluster\".\"", job, "\"");
    if (tasks.kind_case() != Value::kListValue) {
      return WrongType(where, "an array of \"host:port\" strings", tasks);
    }
    std::vector<std::string>& addresses = jobs[job];
    for (const Value& task : tasks.list_value().values()) {
      if (task.kind_case() != Value::kStringValue) {
        return WrongType(absl::StrCat(where, "[", addresses.size(), "]"), "a \"host:port\" string",
                         task);
      }
      addresses.push_back(task.string_value());
    }
  }
  auto evaluators = jobs.find("evaluator");
  if (evaluators != jobs.end() && evaluators->second.size() > 1) {
    return errors::InvalidArgument("\"cluster\".\"evaluator\" has ", evaluators->second.size(),
                                   " tasks; a cluster has at most one evaluator");
  }
  // Kubeflow's TFJob calls TensorFlow's chief "master" (older TF_CONFIGs do too).
  auto masters = jobs.find("master");
  if (masters != jobs.end()) {
    if (jobs.count("chief") != 0) {
      return errors::InvalidArgument(
          "\"cluster\" has both \"chief\" and \"master\"; \"master\" is another name for "
          "the chief, so give one of them");
    }
    if (masters->second.size() > 1) {
      return errors::InvalidArgument("\"cluster\".\"master\" has ", masters->second.size(),
                                     " tasks; a cluster has at most one master (its chief)");
    }
  }
  absl::StatusOr<ClusterSpec> spec = ClusterSpec::FromMap(jobs, options);
  if (!spec.ok()) return WithContext(spec.status(), "\"cluster\"");
  return spec;
}

absl::StatusOr<TaskId> ParseTask(const Value& task, const ClusterSpec& cluster) {
  if (task.kind_case() != Value::kStructValue) {
    return WrongType("\"task\"", "an object {\"type\": ..., \"index\": ...}", task);
  }
  const auto& fields = task.struct_value().fields();
  auto type = fields.find("type");
  if (type == fields.end())
    return errors::InvalidArgument("\"task\" has no \"type\": ", ValueJson(task));
  if (type->second.kind_case() != Value::kStringValue) {
    return WrongType("\"task\".\"type\"", "a string", type->second);
  }
  TaskId id;
  id.job = type->second.string_value();
  auto index = fields.find("index");
  if (index != fields.end()) {  // TensorFlow defaults a missing index to 0
    const Value& value = index->second;
    if (value.kind_case() != Value::kNumberValue) {
      return WrongType("\"task\".\"index\"", "a non-negative integer", value);
    }
    double number = value.number_value();
    if (number < 0 || number != std::floor(number) || number > 1e9) {
      return errors::InvalidArgument("\"task\".\"index\" must be a non-negative integer, got ",
                                     ValueJson(value));
    }
    id.index = static_cast<int>(number);
  }
  // An evaluator runs outside the training cluster, so it need not be listed.
  if (id.job == "evaluator" && !cluster.HasJob("evaluator")) return id;
  if (!cluster.HasJob(id.job)) {
    return errors::InvalidArgument("\"task\".\"type\" '", id.job,
                                   "' is not a job of the cluster; its jobs are ",
                                   cluster.ToString());
  }
  if (id.index >= cluster.num_tasks(id.job)) {
    return errors::InvalidArgument("\"task\".\"index\" ", id.index, " is out of range: job '",
                                   id.job, "' has ", cluster.num_tasks(id.job), " task(s)");
  }
  return id;
}

// The JSON object of a TF_CONFIG, which must have a "cluster".
absl::StatusOr<google::protobuf::Struct> ParseObject(absl::string_view json) {
  Value root;  // any JSON value, so that one of another kind is named
  auto parsed = google::protobuf::util::JsonStringToMessage(std::string(json), &root);
  if (!parsed.ok()) {
    return errors::InvalidArgument("TF_CONFIG is not valid JSON: ",
                                   std::string(parsed.message().data(), parsed.message().size()),
                                   " in '", json, "'");
  }
  if (root.kind_case() != Value::kStructValue) {
    return errors::InvalidArgument(
        "TF_CONFIG is not a JSON object; expected {\"cluster\": {...}, \"task\": {...}}, got '",
        json, "'");
  }
  if (!root.struct_value().fields().contains("cluster")) {
    return errors::InvalidArgument("TF_CONFIG has no \"cluster\": '", json, "'");
  }
  return std::move(*root.mutable_struct_value());
}

// The "rpc_layer" of `fields`, if any.
absl::StatusOr<std::string> ParseRpcLayer(const google::protobuf::Map<std::string, Value>& fields) {
  auto rpc_layer = fields.find("rpc_layer");
  if (rpc_layer == fields.end()) return std::string();
  if (rpc_layer->second.kind_case() != Value::kStringValue) {
    return WrongType("\"rpc_layer\"", "a string", rpc_layer->second);
  }
  const std::string& layer = rpc_layer->second.string_value();
  // TensorFlow's other layers ("grpc+verbs", "grpc+gdr", ...) are not
  // served here: a task that started anyway could reach no peer that
  // expects one.
  if (!layer.empty() && layer != "grpc") {
    return errors::InvalidArgument("\"rpc_layer\" is '", layer,
                                   "'; tensorgrid speaks only \"grpc\"");
  }
  return layer;
}

}  // namespace

absl::StatusOr<TfConfig> TfConfig::ParseTfConfig(absl::string_view json,
                                                 const ClusterSpecOptions& options) {
  TG_ASSIGN_OR_RETURN(const google::protobuf::Struct root, ParseObject(json));
  const auto& fields = root.fields();
  auto task = fields.find("task");
  if (task == fields.end())
    return errors::InvalidArgument("TF_CONFIG has no \"task\": '", json, "'");
  TfConfig config;
  TG_ASSIGN_OR_RETURN(config.cluster, ParseCluster(fields.at("cluster"), options));
  TG_ASSIGN_OR_RETURN(config.task, ParseTask(task->second, config.cluster));
  TG_ASSIGN_OR_RETURN(config.rpc_layer, ParseRpcLayer(fields));
  return config;
}

absl::StatusOr<ClusterSpec> TfConfig::ClusterOf(absl::string_view json,
                                                const ClusterSpecOptions& options, bool* has_task) {
  TG_ASSIGN_OR_RETURN(const google::protobuf::Struct root, ParseObject(json));
  const auto& fields = root.fields();
  TG_ASSIGN_OR_RETURN(ClusterSpec cluster, ParseCluster(fields.at("cluster"), options));
  TG_RETURN_IF_ERROR(ParseRpcLayer(fields).status());
  if (has_task != nullptr) *has_task = fields.contains("task");
  return cluster;
}

absl::StatusOr<TfConfig> TfConfig::FromEnvironment(const ClusterSpecOptions& options) {
  const char* value = std::getenv("TF_CONFIG");
  if (value == nullptr || *value == '\0') return errors::NotFound("TF_CONFIG is not set");
  return ParseTfConfig(value, options);
}

std::string TfConfig::ToJson() const {
  std::string out =
      absl::StrCat("{\"cluster\":", cluster.ToJson(), ",\"task\":{\"type\":", JsonQuote(task.job),
                   ",\"index\":", task.index, "}");
  if (!rpc_layer.empty()) absl::StrAppend(&out, ",\"rpc_layer\":", JsonQuote(rpc_layer));
  return out + "}";
}

bool IsChief(const TfConfig& config) {
  const std::string& job = config.task.job;
  if (job == "chief" || job == "master" || job == "evaluator") return true;
  return job == "worker" && config.task.index == 0 && !config.cluster.HasJob("chief") &&
         !config.cluster.HasJob("master");
}

}  // namespace tensorgrid
