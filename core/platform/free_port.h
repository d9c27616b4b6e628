// FreePort: a TCP port on 127.0.0.1 that nothing listens on right now, for
// tests and benchmarks that must write a cluster's addresses before its
// servers start (servers that can, bind port 0 instead). The kernel picks it
// (bind to port 0); it is released before returning, so another process may
// take it in between: rare enough for tests, which then fail clearly at bind.
#ifndef TENSORGRID_CORE_PLATFORM_FREE_PORT_H_
#define TENSORGRID_CORE_PLATFORM_FREE_PORT_H_

#include <vector>

namespace tensorgrid {

// The port, or 0 if the kernel gave none.
int FreePort();
// `n` such ports, all different (their sockets are held open together), or
// an empty vector if the kernel gave fewer.
std::vector<int> FreePorts(int n);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_PLATFORM_FREE_PORT_H_
