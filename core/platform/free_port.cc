#include "core/platform/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <set>

namespace tensorgrid {
namespace {

// A socket bound to 127.0.0.1:`port` (0: the kernel picks), or -1.
int BindLoopback(int port, int* bound) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  *bound = ntohs(addr.sin_port);
  return fd;
}

// The first port of the kernel's ephemeral range, or 0 if unknown.
int EphemeralLow() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  if (!(range >> low >> high)) return 0;
  return low;
}

}  // namespace

std::vector<int> ReserveFreePorts(int n, std::vector<int>* reserved) {
  std::vector<int> sockets, ports;
  // Below the ephemeral range when there is room: the kernel never hands
  // those out by itself, so no server that binds port 0 (a task's bulk
  // port, say) and no outgoing connection can take one before its user
  // binds it.
  const int low = EphemeralLow();
  if (low >= 4096) {
    const int first = std::max(1024, low - 12000);
    std::mt19937 pick(std::random_device{}());
    std::uniform_int_distribution<int> port(first, low - 1);
    std::set<int> tried;
    for (int attempt = 0; attempt < 200 && static_cast<int>(ports.size()) < n; ++attempt) {
      const int candidate = port(pick);
      if (!tried.insert(candidate).second) continue;
      int bound = 0;
      const int fd = BindLoopback(candidate, &bound);
      if (fd < 0) continue;  // in use
      sockets.push_back(fd);
      ports.push_back(bound);
    }
  }
  // Otherwise (or if that range is crowded) the kernel picks.
  while (static_cast<int>(ports.size()) < n) {
    int bound = 0;
    const int fd = BindLoopback(0, &bound);
    if (fd < 0) break;
    sockets.push_back(fd);
    ports.push_back(bound);
  }
  if (static_cast<int>(ports.size()) != n) {
    for (int fd : sockets) close(fd);
    return {};
  }
  reserved->insert(reserved->end(), sockets.begin(), sockets.end());
  return ports;
}

std::vector<int> FreePorts(int n) {
  std::vector<int> sockets;
  std::vector<int> ports = ReserveFreePorts(n, &sockets);
  for (int fd : sockets) close(fd);
  return ports;
}

std::vector<std::string> FreeLoopbackAddresses(int n) {
  std::vector<std::string> addresses;
  for (int port : FreePorts(n)) addresses.push_back("127.0.0.1:" + std::to_string(port));
  return addresses;
}

int FreePort() {
  const std::vector<int> ports = FreePorts(1);
  return ports.empty() ? 0 : ports[0];
}

absl::Status WithFreeLoopbackAddresses(
    int n, absl::FunctionRef<absl::Status(const std::vector<std::string>& addresses)> start,
    int attempts) {
  absl::Status status;
  for (int attempt = 0; attempt < std::max(1, attempts); ++attempt) {
    const std::vector<std::string> addresses = FreeLoopbackAddresses(n);
    if (static_cast<int>(addresses.size()) != n) {
      return absl::UnavailableError("no " + std::to_string(n) +
                                    " free ports on 127.0.0.1 for a cluster");
    }
    status = start(addresses);
    if (!absl::IsUnavailable(status)) return status;
  }
  return status;
}

}  // namespace tensorgrid
