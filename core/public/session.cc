#include "core/public/session.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

struct Factories {
  absl::Mutex mu;
  std::vector<std::pair<std::string, SessionFactory>> by_prefix ABSL_GUARDED_BY(mu);
};

Factories& GetFactories() {
  static Factories* f = new Factories;
  return *f;
}

bool IsLocal(const std::string& target) { return target.empty() || target == "local"; }

}  // namespace

void RegisterSessionFactory(const std::string& target_prefix, SessionFactory factory) {
  Factories& f = GetFactories();
  absl::MutexLock lock(&f.mu);
  f.by_prefix.emplace_back(target_prefix, std::move(factory));
}

absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) {
  const bool local = IsLocal(options.target);
  SessionFactory factory;
  {
    Factories& f = GetFactories();
    absl::MutexLock lock(&f.mu);
    for (const auto& [prefix, registered] : f.by_prefix) {
      // The prefix "" is the in-process session's, and matches only its targets.
      if (local ? prefix.empty() : !prefix.empty() && absl::StartsWith(options.target, prefix)) {
        factory = registered;
        break;
      }
    }
  }
  if (factory) return factory(options);
  if (local) {
    return errors::Unimplemented("target '", options.target,
                                 "': this binary does not link the in-process session "
                                 "(//client:session)");
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
