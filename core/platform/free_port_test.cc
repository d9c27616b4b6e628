#include "core/platform/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

TEST(FreePortTest, PortsAreDistinctBindableAndOutsideTheEphemeralRange) {
  const std::vector<int> ports = FreePorts(5);
  ASSERT_EQ(ports.size(), 5u);
  EXPECT_EQ(std::set<int>(ports.begin(), ports.end()).size(), 5u);
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  const bool known = static_cast<bool>(range >> low >> high);
  for (int port : ports) {
    EXPECT_GT(port, 0);
    // Below the kernel's own range, where a bind to port 0 never lands.
    if (known && low >= 4096) {
      EXPECT_LT(port, low) << port;
    }
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << port;
    close(fd);
  }
  EXPECT_GT(FreePort(), 0);
}

TEST(FreePortTest, LoopbackAddressesAreDistinct) {
  const std::vector<std::string> addresses = FreeLoopbackAddresses(4);
  ASSERT_EQ(addresses.size(), 4u);
  EXPECT_EQ(std::set<std::string>(addresses.begin(), addresses.end()).size(), 4u);
  for (const std::string& a : addresses) EXPECT_EQ(a.rfind("127.0.0.1:", 0), 0u) << a;
}

TEST(FreePortTest, AStartThatCouldNotBindRunsAgainOnFreshAddresses) {
  // The first start finds its port taken, as when another process picked
  // the same one: it is run again on other addresses.
  std::vector<std::vector<std::string>> seen;
  const absl::Status taken_once = WithFreeLoopbackAddresses(2, [&](const auto& addresses) {
    seen.push_back(addresses);
    return seen.size() == 1 ? absl::UnavailableError("cannot listen on " + addresses[0])
                            : absl::OkStatus();
  });
  EXPECT_TRUE(taken_once.ok()) << taken_once;
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].size(), 2u);

  // Other failures are the start's own, and a port that stays taken ends
  // after the attempts.
  int runs = 0;
  const absl::Status other = WithFreeLoopbackAddresses(1, [&](const auto&) {
    ++runs;
    return absl::InvalidArgumentError("a bad cluster");
  });
  EXPECT_TRUE(absl::IsInvalidArgument(other)) << other;
  EXPECT_EQ(runs, 1);
  runs = 0;
  const absl::Status always = WithFreeLoopbackAddresses(
      1,
      [&](const auto&) {
        ++runs;
        return absl::UnavailableError("cannot listen");
      },
      /*attempts=*/3);
  EXPECT_TRUE(absl::IsUnavailable(always)) << always;
  EXPECT_EQ(runs, 3);
}

}  // namespace
}  // namespace tensorgrid
