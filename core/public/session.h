// Session: runs steps of a graph. The target picks the implementation, from
// the factories linked into the binary: "" (or "local") runs an in-process
// master and worker (//client:session), "grpc://host:port" talks to a remote
// master (//distributed/rpc:grpc_session). The interface is TensorFlow's,
// which keeps it in the same place (core/public/session.h).
//
//   SessionOptions options;                      // target "" = local
//   TG_ASSIGN_OR_RETURN(auto session, NewSession(options));
//   TG_RETURN_IF_ERROR(session->Create(graph_def));
//   std::vector<Tensor> out;
//   TG_RETURN_IF_ERROR(session->Run({{"x", x}}, {"y:0"}, {}, &out));
//
// Thread safety: Run, RunCallable, MakeCallable and ReleaseCallable may be
// called concurrently from many threads; Create/Extend/Close are serialized
// against each other and against running steps.
#ifndef TENSORGRID_CORE_PUBLIC_SESSION_H_
#define TENSORGRID_CORE_PUBLIC_SESSION_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/framework/device.h"  // DeviceInfo
#include "core/framework/tensor.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"

namespace tensorgrid {

struct SessionOptions {
  std::string target;  // "" for an in-process session
  ConfigProto config;
};

class Session {
 public:
  using CallableHandle = int64_t;
  virtual ~Session() = default;

  // Sets the graph (once). InvalidArgument for a malformed graph.
  virtual absl::Status Create(const GraphDef& graph) = 0;
  // Adds nodes to the graph (names must be new).
  virtual absl::Status Extend(const GraphDef& graph) = 0;

  // Feeds `inputs` ("name" or "name:port"), runs what `output_names` and
  // `target_names` need, and returns the outputs in order. `outputs` may be
  // null when nothing is fetched (InvalidArgument otherwise).
  virtual absl::Status Run(const RunOptions& run_options,
                           const std::vector<std::pair<std::string, Tensor>>& inputs,
                           const std::vector<std::string>& output_names,
                           const std::vector<std::string>& target_names,
                           std::vector<Tensor>* outputs, RunMetadata* run_metadata) = 0;
  absl::Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_names, std::vector<Tensor>* outputs) {
    return Run(RunOptions(), inputs, output_names, target_names, outputs, nullptr);
  }

  // A callable fixes feeds, fetches and targets once; RunCallable then skips
  // all per-step lookups. Feeds are passed in CallableOptions.feed order.
  virtual absl::StatusOr<CallableHandle> MakeCallable(const CallableOptions& options) = 0;
  virtual absl::Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                                   std::vector<Tensor>* fetches, RunMetadata* run_metadata) = 0;
  virtual absl::Status ReleaseCallable(CallableHandle handle) = 0;

  // Releases the session's graphs; later calls fail with FailedPrecondition.
  virtual absl::Status Close() = 0;

  // The devices this session places nodes on: every device of the tasks it
  // reaches, less those ConfigProto.device_filters exclude. Waits for tasks
  // that are not up yet like Create does.
  virtual absl::StatusOr<std::vector<DeviceInfo>> ListDevices() = 0;

  // Clears resource containers on every task the session reaches (its
  // device_filters apply): every container when `containers` is empty, else
  // the named ones ("" is the default container, where variables live unless
  // given another). Variables there lose their values. For a grpc:// session
  // this is TensorFlow's tf.Session.reset: it also closes every session open
  // on that master, this one included.
  virtual absl::Status Reset(const std::vector<std::string>& containers) = 0;
};

// Reset on a fresh session for `options`: clears `containers` on the
// cluster of options.target (see Session::Reset). Variables on a ps outlive
// client sessions; this is how to drop them without restarting the ps.
absl::Status Reset(const SessionOptions& options, const std::vector<std::string>& containers);

// A session for options.target, made by the factory registered for it: ""
// and "local" go to the in-process one (registered under the prefix ""),
// any other target to the factory whose prefix it starts with (the gRPC
// session registers "grpc://"). Unimplemented naming the library to link
// when no factory for a known kind of target is linked; InvalidArgument for
// an unknown target.
absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options);

// Registers `factory` for targets starting with `target_prefix` (the
// prefix "" stands for the in-process targets "" and "local" only). Called
// from static initializers of the libraries that implement sessions.
using SessionFactory =
    std::function<absl::StatusOr<std::unique_ptr<Session>>(const SessionOptions&)>;
void RegisterSessionFactory(const std::string& target_prefix, SessionFactory factory);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_PUBLIC_SESSION_H_
