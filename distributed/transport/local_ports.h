// The bulk ports of this process, for its own clients: a client that would
// reach one of them (a session on its own process's master, a worker's
// RunGraph to a task in the same process) calls the port's handler directly
// instead of writing to a loopback socket and waking the port's thread
// (TensorFlow's LocalMaster does the same for a session's own master).
// BulkServer registers its port; BulkClient looks it up before each call.
//
//   uint64_t id = bulk::RegisterLocalPort(port, "0.0.0.0", "worker-0.svc", call_here);
//   bulk::LocalCallFn fn = bulk::FindLocalPort("worker-0.svc", port);  // call_here
//   bulk::UnregisterLocalPort(port, id);
//
// Off when TG_BULK_IN_PROCESS is "0" or "false" (every call then takes the
// socket, as between processes). Thread-safe.
#ifndef TENSORGRID_DISTRIBUTED_TRANSPORT_LOCAL_PORTS_H_
#define TENSORGRID_DISTRIBUTED_TRANSPORT_LOCAL_PORTS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tensorgrid {
namespace bulk {

// A call made in process: what a client would send.
struct LocalCall {
  std::string addressee;  // the task meant; empty: any
  std::string token;
  std::string method;
  std::string* request;  // moved from once the port takes the call
  absl::Time deadline;
};
// The answer to a call made in process: its status and, when OK, what
// makes its bytes (or fails; null: none), for the caller to run on its own
// thread, as a socket's answer is made on the port's thread rather than on
// the one that finished the work.
using LocalAnswer = std::function<absl::StatusOr<std::string>()>;
using LocalCallDone = std::function<void(absl::Status status, LocalAnswer answer)>;
// Withdraws a call made in process, as a client hanging up does: its
// handler is cancelled (`done` may still run, and must be ignored then).
using LocalCallWithdraw = std::function<void()>;
// Runs `call` on the port: `done` then runs once, from any thread (this one,
// even, before the function returns). Returns how to withdraw it, or null
// when the port does not take the call (no such method, another task, over
// its size limit, not listening), leaving the request as it was; a call
// with a wrong token is taken and answered Unauthenticated, as on the
// socket.
using LocalCallFn = std::function<LocalCallWithdraw(const LocalCall& call, LocalCallDone done)>;

// Registers this process's port `port`, bound to `bind_host` (as given to
// Listen: "127.0.0.1", "0.0.0.0", a name) and known to peers as
// `advertised_host` too (the task's cluster entry; empty: none); the id
// unregisters it. A later registration of the port (a new server after the
// old one stopped) takes its place.
uint64_t RegisterLocalPort(int port, const std::string& bind_host,
                           const std::string& advertised_host, LocalCallFn fn);
// Removes registration `id` of `port`, if it is still the port's.
void UnregisterLocalPort(int port, uint64_t id);
// The port of this process that a client dialing `host`:`port` reaches, or
// an empty function: `host` is the port's bind host or advertised host
// itself, or a loopback name or address ("localhost", 127.x.x.x, ::1) when
// the port is bound to loopback or to every address. (Any other address of
// a port bound to every address may name another machine: not taken.)
LocalCallFn FindLocalPort(const std::string& host, int port);

}  // namespace bulk
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_TRANSPORT_LOCAL_PORTS_H_
