#include "client/session.h"

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "core/platform/status.h"
#include "core/runtime/master.h"
#include "core/runtime/worker.h"

namespace tensorgrid {

namespace {

constexpr char kLocalTask[] = "/job:localhost/replica:0/task:0";

// The in-process session: a Master driving a Worker, no RPC in between.
class LocalSession final : public Session {
 public:
  explicit LocalSession(const SessionOptions& options)
      : worker_(kLocalTask, options.config),
        master_(options.config, &worker_, kLocalTask) {}

  absl::Status Create(const GraphDef& graph) override { return master_.Create(graph); }
  absl::Status Extend(const GraphDef& graph) override { return master_.Extend(graph); }
  absl::Status Run(const RunOptions& run_options,
                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_names, std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) override {
    return master_.Run(run_options, inputs, output_names, target_names, outputs, run_metadata);
  }
  absl::StatusOr<CallableHandle> MakeCallable(const CallableOptions& options) override {
    return master_.MakeCallable(options);
  }
  absl::Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                           std::vector<Tensor>* fetches, RunMetadata* run_metadata) override {
    return master_.RunCallable(handle, feeds, fetches, run_metadata);
  }
  absl::Status ReleaseCallable(CallableHandle handle) override {
    return master_.ReleaseCallable(handle);
  }
  absl::Status Close() override { return master_.Close(); }
  absl::StatusOr<std::vector<DeviceInfo>> ListDevices() override { return master_.ListDevices(); }
  absl::Status Reset(const std::vector<std::string>& containers) override {
    return master_.Reset(containers);
  }

 private:
  Worker worker_;  // declared first: the master deregisters from it on destruction
  Master master_;
};

struct Factories {
  absl::Mutex mu;
  std::vector<std::pair<std::string, SessionFactory>> by_prefix ABSL_GUARDED_BY(mu);
};

Factories& GetFactories() {
  static Factories* f = new Factories;
  return *f;
}

}  // namespace

void RegisterSessionFactory(const std::string& target_prefix, SessionFactory factory) {
  Factories& f = GetFactories();
  absl::MutexLock lock(&f.mu);
  f.by_prefix.emplace_back(target_prefix, std::move(factory));
}

absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) {
  if (options.target.empty() || options.target == "local") {
    return std::unique_ptr<Session>(new LocalSession(options));
  }
  Factories& f = GetFactories();
  {
    absl::MutexLock lock(&f.mu);
    for (const auto& [prefix, factory] : f.by_prefix) {
      if (absl::StartsWith(options.target, prefix)) return factory(options);
    }
  }
  if (absl::StartsWith(options.target, "grpc://")) {
    return errors::Unimplemented("target '", options.target,
                                 "': this binary does not link the gRPC session");
  }
  return errors::InvalidArgument("unknown session target '", options.target,
                                 "' (expected \"\" or grpc://host:port)");
}

absl::Status Reset(const SessionOptions& options, const std::vector<std::string>& containers) {
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  return session->Reset(containers);
}

}  // namespace tensorgrid
