#include "core/platform/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tensorgrid {

std::vector<int> FreePorts(int n) {
  std::vector<int> sockets, ports;
  for (int i = 0; i < n; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    sockets.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : sockets) close(fd);
  if (static_cast<int>(ports.size()) != n) ports.clear();
  return ports;
}

int FreePort() {
  const std::vector<int> ports = FreePorts(1);
  return ports.empty() ? 0 : ports[0];
}

}  // namespace tensorgrid
