#include "client/saved_model/signature_runner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/framework/types.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

std::string NodeName(const std::string& tensor_name) {
  return tensor_name.substr(0, tensor_name.find(':'));
}

template <typename MapT>
std::vector<std::string> Keys(const MapT& map) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : map) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SignatureRunner>> SignatureRunner::Create(
    SavedModelBundle* bundle, const std::string& signature_key) {
  const auto& signatures = bundle->GetSignatures();
  auto it = signatures.find(signature_key);
  if (it == signatures.end()) {
    return errors::NotFound("SavedModel '", bundle->export_dir, "' has no signature '",
                            signature_key,
                            "'; its signatures: ", absl::StrJoin(Keys(signatures), ", "));
  }
  const SignatureDef& signature = it->second;
  absl::flat_hash_set<std::string> optional_inputs;
  for (const auto& [key, info] : signature.inputs()) {
    if (info.name().empty()) {
      return errors::Unimplemented("signature '", signature_key, "' input '", key,
                                   "' is a sparse or composite tensor; only dense inputs run");
    }
    for (const NodeDef& node : bundle->meta_graph_def.graph_def().node()) {
      if (node.name() == NodeName(info.name()) && node.op() == "PlaceholderWithDefault") {
        optional_inputs.insert(key);
      }
    }
  }
  for (const auto& [key, info] : signature.outputs()) {
    if (info.name().empty()) {
      return errors::Unimplemented("signature '", signature_key, "' output '", key,
                                   "' is a sparse or composite tensor; only dense outputs run");
    }
  }
  return std::unique_ptr<SignatureRunner>(
      new SignatureRunner(bundle, signature_key, &signature, std::move(optional_inputs)));
}

SignatureRunner::SignatureRunner(SavedModelBundle* bundle, std::string key,
                                 const SignatureDef* signature,
                                 absl::flat_hash_set<std::string> optional_inputs)
    : bundle_(bundle),
      key_(std::move(key)),
      signature_(signature),
      optional_inputs_(std::move(optional_inputs)) {}

SignatureRunner::~SignatureRunner() {
  absl::MutexLock lock(&mu_);
  for (const auto& [keys, handle] : callables_) {
    bundle_->session->ReleaseCallable(handle).IgnoreError();
  }
}

std::vector<std::string> SignatureRunner::input_keys() const { return Keys(signature_->inputs()); }
std::vector<std::string> SignatureRunner::output_keys() const {
  return Keys(signature_->outputs());
}

absl::StatusOr<Session::CallableHandle> SignatureRunner::Callable(
    const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  absl::MutexLock lock(&mu_);
  auto it = callables_.find({inputs, outputs});
  if (it != callables_.end()) return it->second;
  CallableOptions options;
  for (const std::string& key : inputs) options.add_feed(signature_->inputs().at(key).name());
  for (const std::string& key : outputs) options.add_fetch(signature_->outputs().at(key).name());
  TG_ASSIGN_OR_RETURN(Session::CallableHandle handle, bundle_->session->MakeCallable(options));
  callables_.emplace(std::make_pair(inputs, outputs), handle);
  return handle;
}

absl::Status SignatureRunner::NoSuchInput(const std::string& key) const {
  const std::vector<std::string> keys = input_keys();
  return errors::InvalidArgument("signature '", key_, "' has no input '", key, "'; ",
                                 keys.empty()
                                     ? std::string("it takes none")
                                     : absl::StrCat("its inputs: ", absl::StrJoin(keys, ", ")));
}

absl::StatusOr<std::map<std::string, Tensor>> SignatureRunner::Run(
    const std::map<std::string, Tensor>& inputs, const std::vector<std::string>& output_keys) {
  const std::string context = absl::StrCat("signature '", key_, "'");
  std::vector<std::string> fed;
  std::vector<Tensor> feeds;
  for (const auto& [key, tensor] : inputs) {
    auto it = signature_->inputs().find(key);
    if (it == signature_->inputs().end()) {
      return NoSuchInput(key);
    }
    const DataType want = it->second.dtype();
    if (want != DT_INVALID && tensor.dtype() != want) {
      return errors::InvalidArgument(context, " input '", key, "' (", it->second.name(), ") is ",
                                     DataTypeString(want), "; got a ",
                                     DataTypeString(tensor.dtype()), " tensor");
    }
    fed.push_back(key);
    feeds.push_back(tensor);
  }
  for (const auto& [key, info] : signature_->inputs()) {
    if (!inputs.count(key) && !optional_inputs_.count(key)) {
      return errors::InvalidArgument(context, " needs input '", key, "' (", info.name(),
                                     "); given: [", absl::StrJoin(fed, ", "), "]");
    }
  }
  std::vector<std::string> fetched = output_keys.empty() ? this->output_keys() : output_keys;
  for (const std::string& key : fetched) {
    if (!signature_->outputs().count(key)) {
      return errors::InvalidArgument(context, " has no output '", key,
                                     "'; its outputs: ", absl::StrJoin(this->output_keys(), ", "));
    }
  }
  TG_ASSIGN_OR_RETURN(Session::CallableHandle handle, Callable(fed, fetched));
  std::vector<Tensor> fetches;
  TG_RETURN_IF_ERROR(
      WithContext(bundle_->session->RunCallable(handle, feeds, &fetches, nullptr), context));
  std::map<std::string, Tensor> outputs;
  for (size_t i = 0; i < fetched.size(); ++i) outputs[fetched[i]] = std::move(fetches[i]);
  return outputs;
}

}  // namespace tensorgrid
