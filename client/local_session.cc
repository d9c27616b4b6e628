// The in-process session (targets "" and "local"): a Master driving a
// Worker in this process, no RPC in between. Linking //client:session
// registers it with NewSession.
#include "core/public/session.h"
#include "core/runtime/master.h"
#include "core/runtime/worker.h"

namespace tensorgrid {

namespace {

constexpr char kLocalTask[] = "/job:localhost/replica:0/task:0";

// The in-process session: a Master driving a Worker, no RPC in between.
class LocalSession final : public Session {
 public:
  explicit LocalSession(const SessionOptions& options)
      : worker_(kLocalTask, options.config), master_(options.config, &worker_, kLocalTask) {}

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

// Registers LocalSession for the targets "" and "local" when this library
// is linked.
struct Registration {
  Registration() {
    RegisterSessionFactory(
        "", [](const SessionOptions& options) -> absl::StatusOr<std::unique_ptr<Session>> {
          return std::unique_ptr<Session>(new LocalSession(options));
        });
  }
};
Registration registration;

}  // namespace

}  // namespace tensorgrid
