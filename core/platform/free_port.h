// FreePort: a TCP port on 127.0.0.1 that nothing listens on right now, for
// tests and benchmarks that must write a cluster's addresses before its
// servers start (servers that can, bind port 0 instead). It is picked at
// random below the kernel's ephemeral range (ip_local_port_range), so that
// nothing the kernel numbers by itself (a server on port 0, such as a
// task's bulk port, or an outgoing connection) can take it before it is
// used; where that range leaves no room, the kernel picks it. It is
// released before returning, so another process may still take it in
// between: rare enough for tests, which then fail clearly at bind.
#ifndef TENSORGRID_CORE_PLATFORM_FREE_PORT_H_
#define TENSORGRID_CORE_PLATFORM_FREE_PORT_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace tensorgrid {

// The port, or 0 if the kernel gave none.
int FreePort();
// `n` such ports, all different (their sockets are held open together), or
// an empty vector if fewer were found.
std::vector<int> FreePorts(int n);
// `n` distinct "127.0.0.1:port" addresses on FreePorts, for a cluster's
// tasks (separate FreePort calls may pick one port twice); empty if fewer
// were found.
std::vector<std::string> FreeLoopbackAddresses(int n);
// As FreePorts, but the sockets bound to the ports stay open (appended to
// `*reserved`; the caller closes them, just before its servers bind), so
// the ports stay reserved meanwhile. Nothing is appended when it fails.
std::vector<int> ReserveFreePorts(int n, std::vector<int>* reserved);

// Runs `start` with FreeLoopbackAddresses(n) and, when it fails Unavailable
// (a server could not bind: another process took the port between the
// pick and the bind, as tests running at once can), again with fresh
// addresses, at most `attempts` times in all. `start` undoes what it
// started before it fails. Returns its last status, or Unavailable when n
// free addresses cannot be found.
absl::Status WithFreeLoopbackAddresses(
    int n, absl::FunctionRef<absl::Status(const std::vector<std::string>& addresses)> start,
    int attempts = 3);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_PLATFORM_FREE_PORT_H_
