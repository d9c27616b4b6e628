#include "distributed/transport/local_ports.h"

#include <cstdlib>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"

namespace tensorgrid {
namespace bulk {
namespace {

struct LocalPort {
  uint64_t id = 0;
  std::string bind_host, advertised_host;
  LocalCallFn fn;
};

struct Registry {
  absl::Mutex mu;
  uint64_t next_id ABSL_GUARDED_BY(mu) = 1;
  std::map<int, LocalPort> ports ABSL_GUARDED_BY(mu);
};

Registry& TheRegistry() {
  static Registry* registry = new Registry();  // never destroyed: servers may outlive main
  return *registry;
}

bool Enabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("TG_BULK_IN_PROCESS");
    return env == nullptr || (std::string(env) != "0" && std::string(env) != "false");
  }();
  return enabled;
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || absl::StartsWith(host, "127.") || host == "::1" || host == "[::1]";
}

bool IsAny(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

}  // namespace

uint64_t RegisterLocalPort(int port, const std::string& bind_host,
                           const std::string& advertised_host, LocalCallFn fn) {
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  const uint64_t id = r.next_id++;
  r.ports[port] = LocalPort{id, bind_host, advertised_host, std::move(fn)};
  return id;
}

void UnregisterLocalPort(int port, uint64_t id) {
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  auto it = r.ports.find(port);
  if (it != r.ports.end() && it->second.id == id) r.ports.erase(it);
}

LocalCallFn FindLocalPort(const std::string& host, int port) {
  if (!Enabled()) return nullptr;
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  auto it = r.ports.find(port);
  if (it == r.ports.end()) return nullptr;
  const std::string& bound = it->second.bind_host;
  const bool reaches = host == bound || (!host.empty() && host == it->second.advertised_host) ||
                       (IsLoopback(host) && (IsLoopback(bound) || IsAny(bound)));
  return reaches ? it->second.fn : nullptr;
}

}  // namespace bulk
}  // namespace tensorgrid
