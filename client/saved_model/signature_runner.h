// SignatureRunner: runs one signature of a loaded SavedModel by its input and
// output keys ("x" -> "y"), which it maps to the graph's tensors through the
// SignatureDef. Each set of fed keys becomes one Session callable, made at
// its first use and reused after. docs/saved_model.md.
//
//   TG_ASSIGN_OR_RETURN(auto predict, SignatureRunner::Create(&bundle, "serving_default"));
//   TG_ASSIGN_OR_RETURN(auto outputs, predict->Run({{"x", x}}));   // outputs["y"]
//
// Run feeds the given inputs and fetches every output (or those named).
// Errors are InvalidArgument naming the signature and the key: an input key
// the signature does not have, an input left out (only inputs whose tensor
// is a PlaceholderWithDefault may be), a tensor whose dtype is not the
// signature's, an output key it does not have. Shapes are checked by the
// graph (its placeholders), as TensorFlow Serving does.
//
// Thread safety: Run may be called from many threads at once. The bundle
// must outlive the runner.
#ifndef TENSORGRID_CLIENT_SAVED_MODEL_SIGNATURE_RUNNER_H_
#define TENSORGRID_CLIENT_SAVED_MODEL_SIGNATURE_RUNNER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "client/saved_model/loader.h"
#include "core/framework/tensor.h"

namespace tensorgrid {

class SignatureRunner {
 public:
  // NotFound naming the signature and listing the model's signatures.
  static absl::StatusOr<std::unique_ptr<SignatureRunner>> Create(SavedModelBundle* bundle,
                                                                 const std::string& signature_key);
  ~SignatureRunner();
  SignatureRunner(const SignatureRunner&) = delete;
  SignatureRunner& operator=(const SignatureRunner&) = delete;

  // Outputs by key: every output of the signature, or those in output_keys.
  absl::StatusOr<std::map<std::string, Tensor>> Run(
      const std::map<std::string, Tensor>& inputs,
      const std::vector<std::string>& output_keys = {});

  const std::string& signature_key() const { return key_; }
  const SignatureDef& signature_def() const { return *signature_; }
  // Sorted.
  std::vector<std::string> input_keys() const;
  std::vector<std::string> output_keys() const;
  // InvalidArgument: "signature 'k' has no input 'key'; its inputs: ..."
  // (or "it takes none").
  absl::Status NoSuchInput(const std::string& key) const;

 private:
  SignatureRunner(SavedModelBundle* bundle, std::string key, const SignatureDef* signature,
                  absl::flat_hash_set<std::string> optional_inputs);
  // The callable feeding `inputs`' keys and fetching `outputs` (keys, in order).
  absl::StatusOr<Session::CallableHandle> Callable(const std::vector<std::string>& inputs,
                                                   const std::vector<std::string>& outputs);

  SavedModelBundle* const bundle_;
  const std::string key_;
  const SignatureDef* const signature_;
  // Input keys whose tensors have a default (PlaceholderWithDefault).
  const absl::flat_hash_set<std::string> optional_inputs_;
  absl::Mutex mu_;
  std::map<std::pair<std::vector<std::string>, std::vector<std::string>>, Session::CallableHandle>
      callables_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_SAVED_MODEL_SIGNATURE_RUNNER_H_
