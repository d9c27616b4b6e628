// ClientSession: runs the graph of a Scope, in TensorFlow's C++ shape. It
// creates a Session (NewSession) and, before each run, sends it the nodes
// added to the scope's graph since the previous run (Create once, then Extend),
// so building and running may alternate.
//
//   Scope root = Scope::NewRootScope();
//   auto x = ops::Placeholder(root, DT_FLOAT);
//   auto y = ops::Mul(root, x, 2.f);
//   ClientSession session(root);
//   std::vector<Tensor> out;
//   TG_RETURN_IF_ERROR(session.Run({{x, {1.f, 2.f}}}, {y}, &out));   // out[0] = [2, 4]
//
// Errors: a failed session creation, or an error on the scope, is returned by
// every Run. Thread safety: Run and the callable calls may be called
// concurrently (as Session allows) but not while nodes are being added to the
// scope's graph, which is not thread-safe.
#ifndef TENSORGRID_CLIENT_CLIENT_SESSION_H_
#define TENSORGRID_CLIENT_CLIENT_SESSION_H_

#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "client/output.h"
#include "client/scope.h"
#include "core/framework/tensor.h"
#include "core/public/session.h"
#include "proto/config.pb.h"

namespace tensorgrid {

class ClientSession {
 public:
  // Values to feed, by the Output they replace: {{x, 1.f}, {y, {{1, 2}}}}.
  using FeedType = std::unordered_map<Output, Input::Initializer, OutputHash>;
  using CallableHandle = Session::CallableHandle;

  explicit ClientSession(const Scope& scope, const SessionOptions& options = SessionOptions());
  // A session on `target` ("" = in-process).
  ClientSession(const Scope& scope, const std::string& target);
  ~ClientSession();

  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  // Evaluates `fetch_outputs` (in order, into `outputs`) with nothing fed.
  absl::Status Run(const std::vector<Output>& fetch_outputs, std::vector<Tensor>* outputs) const;
  absl::Status Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                   std::vector<Tensor>* outputs) const;
  // Also runs `run_outputs` (targets such as an Assign or NoOp) for their effects.
  absl::Status Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                   const std::vector<Operation>& run_outputs, std::vector<Tensor>* outputs) const;
  absl::Status Run(const RunOptions& run_options, const FeedType& inputs,
                   const std::vector<Output>& fetch_outputs,
                   const std::vector<Operation>& run_outputs, std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) const;

  // Pass-through to Session's callables (after sending new nodes); feeds and
  // fetches in `options` are tensor names, e.g. Output::name().
  absl::StatusOr<CallableHandle> MakeCallable(const CallableOptions& options);
  absl::Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                           std::vector<Tensor>* fetches, RunMetadata* run_metadata);
  absl::Status ReleaseCallable(CallableHandle handle);

  // The underlying session (nullptr if it could not be created).
  Session* session() const { return session_.get(); }

 private:
  // Sends the scope's nodes added since the last call to the session.
  absl::Status MaybeExtendGraph() const;

  Scope scope_;
  absl::Status init_status_;
  std::unique_ptr<Session> session_;
  mutable absl::Mutex mu_;
  mutable bool created_ ABSL_GUARDED_BY(mu_) = false;
  mutable int last_num_nodes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_CLIENT_SESSION_H_
