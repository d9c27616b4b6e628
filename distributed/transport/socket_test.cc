#include "distributed/transport/socket.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace bulk {
namespace {

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

// A listener on the loopback and a client connected to it.
struct Connected {
  Listener listener;
  UniqueFd client;
};
Connected ConnectOnLoopback() {
  Connected c;
  absl::StatusOr<Listener> listener = Listen("127.0.0.1");
  EXPECT_OK(listener.status());
  if (!listener.ok()) return c;
  c.listener = *std::move(listener);
  ConnectFailure failure;
  absl::StatusOr<UniqueFd> client =
      Connect("127.0.0.1", c.listener.port, absl::Now() + absl::Seconds(10), &failure);
  EXPECT_OK(client.status());
  if (client.ok()) c.client = *std::move(client);
  return c;
}

TEST(SocketTest, HostOf) {
  EXPECT_EQ(HostOf("localhost:2222"), "localhost");
  EXPECT_EQ(HostOf("[::1]:2222"), "::1");
  EXPECT_EQ(HostOf("10.0.0.1:80"), "10.0.0.1");
}

TEST(SocketTest, UniqueFdClosesWhatItOwnsOnce) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  {
    UniqueFd read_end(pipe_fds[0]);
    UniqueFd moved = std::move(read_end);
    EXPECT_FALSE(read_end.valid());
    EXPECT_EQ(moved.get(), pipe_fds[0]);
    EXPECT_TRUE(IsOpen(pipe_fds[0]));
  }
  EXPECT_FALSE(IsOpen(pipe_fds[0]));
  UniqueFd write_end(pipe_fds[1]);
  const int released = write_end.release();
  EXPECT_FALSE(write_end.valid());
  EXPECT_TRUE(IsOpen(released));
  write_end.reset(released);
  write_end.reset();
  EXPECT_FALSE(IsOpen(released));
}

TEST(SocketTest, ConnectsToAListenerAndBytesCrossWhole) {
  Connected c = ConnectOnLoopback();
  ASSERT_TRUE(c.client.valid());
  ASSERT_GT(c.listener.port, 0);
  UniqueFd server(accept(c.listener.fd.get(), nullptr, nullptr));
  ASSERT_TRUE(server.valid());
  const std::string sent(1 << 20, 'x');
  std::thread writer([&] { EXPECT_TRUE(WriteFull(c.client.get(), sent)); });
  std::string got(sent.size(), '\0');
  EXPECT_EQ(ReadFull(server.get(), got.data(), got.size(), absl::Now() + absl::Seconds(10)),
            got.size());
  writer.join();
  EXPECT_EQ(got, sent);
}

TEST(SocketTest, AReadPastItsDeadlineSaysSo) {
  Connected c = ConnectOnLoopback();
  ASSERT_TRUE(c.client.valid());
  char byte;
  EXPECT_EQ(ReadFull(c.client.get(), &byte, 1, absl::Now() + absl::Milliseconds(20)), 0u);
  EXPECT_STATUS(IoFailure("reading the answer"), kDeadlineExceeded,
                "reading the answer: the deadline passed");
}

TEST(SocketTest, AGrowingReadSpendsMemoryOnlyOnWhatArrives) {
  int ends[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
  UniqueFd writer(ends[0]), reader(ends[1]);
  ASSERT_TRUE(WriteFull(writer.get(), "0123456789"));
  std::string out = "old";
  ASSERT_TRUE(ReadGrowing(reader.get(), 4, &out));
  EXPECT_EQ(out, "0123");
  // A length of 1 GiB of which 6 bytes come: no gigabyte is allocated.
  writer.reset();
  EXPECT_FALSE(ReadGrowing(reader.get(), uint64_t{1} << 30, &out));
  EXPECT_EQ(out, "456789");
  EXPECT_LE(out.capacity(), size_t{64} << 10);
  EXPECT_STATUS(IoFailure("reading the answer"), kUnavailable, "the connection was closed");
}

TEST(IncomingTest, AShortReadTakesWhatElseHasArrivedInTheSameRecv) {
  int ends[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
  UniqueFd writer(ends[0]), reader(ends[1]);
  ASSERT_TRUE(WriteFull(writer.get(), "kheader-body"));
  Incoming::Ahead ahead;
  Incoming in(reader.get(), &ahead);
  char kind;
  ASSERT_EQ(in.ReadFull(&kind, 1), 1u);
  EXPECT_EQ(kind, 'k');
  EXPECT_EQ(in.ahead(), "header-body");  // one recv took it all
  // The socket is empty now: what follows is read from what is ahead.
  char available[1];
  EXPECT_EQ(recv(reader.get(), available, 1, MSG_DONTWAIT), -1);
  char header[7];
  ASSERT_EQ(in.ReadFull(header, sizeof(header)), sizeof(header));
  EXPECT_EQ(std::string(header, sizeof(header)), "header-");
  std::string body;
  ASSERT_TRUE(in.ReadGrowing(4, &body));
  EXPECT_EQ(body, "body");
  EXPECT_TRUE(ahead.empty());
}

TEST(IncomingTest, ReadsGoOnFromTheSocketOnceTheBytesAheadRunOut) {
  int ends[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
  UniqueFd writer(ends[0]), reader(ends[1]);
  Incoming::Ahead ahead;
  Incoming in(reader.get(), &ahead);
  ASSERT_TRUE(WriteFull(writer.get(), "abc"));
  ASSERT_EQ(in.Receive(), 3);
  EXPECT_EQ(in.Receive(), -1);  // nothing more yet
  EXPECT_EQ(errno, EAGAIN);
  // Half ahead, half sent later, and a large read straight from the socket.
  std::thread later([&] {
    absl::SleepFor(absl::Milliseconds(20));
    WriteFull(writer.get(), "defgh" + std::string(100 << 10, 'x'));
  });
  char six[6];
  ASSERT_EQ(in.ReadFull(six, sizeof(six), absl::Now() + absl::Seconds(30)), sizeof(six));
  EXPECT_EQ(std::string(six, sizeof(six)), "abcdef");
  std::string large(2 + (100 << 10), '\0');
  ASSERT_EQ(in.ReadFull(large.data(), large.size(), absl::Now() + absl::Seconds(30)), large.size());
  EXPECT_EQ(large, "gh" + std::string(100 << 10, 'x'));
  later.join();
  // A growing read that the end cuts short keeps what came, ahead first.
  ASSERT_TRUE(WriteFull(writer.get(), "123"));
  ASSERT_EQ(in.Receive(), 3);
  in.Skip(1);
  EXPECT_EQ(in.ahead(), "23");
  ASSERT_TRUE(WriteFull(writer.get(), "45"));
  writer.reset();
  std::string out;
  EXPECT_FALSE(in.ReadGrowing(10, &out, absl::Now() + absl::Seconds(30)));
  EXPECT_EQ(out, "2345");
  EXPECT_EQ(errno, 0);  // the end, not an error
  char byte;
  EXPECT_EQ(in.ReadFull(&byte, 1), 0u);
  EXPECT_EQ(in.Receive(), 0);
}

TEST(IncomingTest, TheBufferHoldsNoMoreThanWhatIsAheadAndOneRecv) {
  int ends[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
  UniqueFd writer(ends[0]), reader(ends[1]);
  // A long stream of 100-byte items, read one by one as they come.
  std::string stream;
  for (int i = 0; i < 2000; ++i) stream += std::string(100, static_cast<char>('a' + i % 26));
  std::thread sender([&] { WriteFull(writer.get(), stream); });
  Incoming::Ahead ahead;
  Incoming in(reader.get(), &ahead);
  for (int i = 0; i < 2000; ++i) {
    char item[100];
    ASSERT_EQ(in.ReadFull(item, sizeof(item), absl::Now() + absl::Seconds(30)), sizeof(item));
    ASSERT_EQ(std::string(item, sizeof(item)), stream.substr(100 * i, 100)) << i;
    ASSERT_LE(ahead.bytes.size(), Incoming::kReadAhead + sizeof(item)) << i;
  }
  sender.join();
}

TEST(IncomingTest, AReadPastItsDeadlineSaysSoWithNothingAhead) {
  Connected c = ConnectOnLoopback();
  ASSERT_TRUE(c.client.valid());
  Incoming::Ahead ahead;
  Incoming in(c.client.get(), &ahead);
  char byte;
  EXPECT_EQ(in.ReadFull(&byte, 1, absl::Now() + absl::Milliseconds(20)), 0u);
  EXPECT_STATUS(IoFailure("reading the answer"), kDeadlineExceeded, "the deadline passed");
}

TEST(SocketTest, APeerThatHangsUpIsSeenAndItsEndReadsAsClosed) {
  Connected c = ConnectOnLoopback();
  ASSERT_TRUE(c.client.valid());
  UniqueFd server(accept(c.listener.fd.get(), nullptr, nullptr));
  EXPECT_FALSE(PeerHungUp(server.get()));
  c.client.reset();
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (!PeerHungUp(server.get()) && absl::Now() < until) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_TRUE(PeerHungUp(server.get()));
  char byte;
  EXPECT_EQ(ReadFull(server.get(), &byte, 1), 0u);
  EXPECT_STATUS(IoFailure("waiting"), kUnavailable, "the connection was closed");
}

TEST(SocketTest, NothingListeningIsRefused) {
  absl::StatusOr<Listener> listener = Listen("127.0.0.1");
  ASSERT_OK(listener.status());
  const int port = listener->port;
  listener->fd.reset();  // the port is free again
  ConnectFailure failure = ConnectFailure::kDeadline;
  absl::StatusOr<UniqueFd> client =
      Connect("127.0.0.1", port, absl::Now() + absl::Seconds(10), &failure);
  EXPECT_STATUS(client.status(), kUnavailable, "cannot connect to the bulk port 127.0.0.1:");
  EXPECT_EQ(failure, ConnectFailure::kRefused);
}

TEST(SocketTest, ListensOnAGivenPortOnceOnly) {
  absl::StatusOr<Listener> any = Listen("127.0.0.1");
  ASSERT_OK(any.status());
  const int port = any->port;
  any->fd.reset();
  absl::StatusOr<Listener> fixed = Listen("127.0.0.1", port);
  ASSERT_OK(fixed.status());
  EXPECT_EQ(fixed->port, port);
  EXPECT_STATUS(Listen("127.0.0.1", port).status(), kUnavailable,
                absl::StrCat("bulk port: cannot listen on 127.0.0.1 port ", port,
                             ": Address already in use"));
}

TEST(SocketTest, AnUnresolvableHostIsUnreachable) {
  ConnectFailure failure = ConnectFailure::kDeadline;
  absl::StatusOr<UniqueFd> client =
      Connect("no-such-host.invalid", 1, absl::Now() + absl::Seconds(10), &failure);
  EXPECT_STATUS(client.status(), kUnavailable, "cannot resolve the bulk port's host");
  EXPECT_EQ(failure, ConnectFailure::kUnreachable);
  EXPECT_STATUS(Listen("no-such-host.invalid").status(), kUnavailable,
                "bulk port: cannot resolve 'no-such-host.invalid'");
}

TEST(SocketTest, OutOfFileDescriptorsIsNoSocketNotAnUnreachablePort) {
  absl::StatusOr<Listener> listener = Listen("127.0.0.1");
  ASSERT_OK(listener.status());
  // No descriptor above the lowest free one may be opened: the next socket
  // fails with EMFILE. (Restored before any assertion can return.)
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int lowest_free = dup(0);
  ASSERT_GE(lowest_free, 0);
  close(lowest_free);
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  ConnectFailure failure = ConnectFailure::kDeadline;
  absl::StatusOr<UniqueFd> client =
      Connect("127.0.0.1", listener->port, absl::Now() + absl::Seconds(10), &failure);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_STATUS(client.status(), kUnavailable, "cannot open a socket to the bulk port 127.0.0.1:");
  EXPECT_STATUS(client.status(), kUnavailable, "Too many open files");
  EXPECT_EQ(failure, ConnectFailure::kNoSocket);
  // With descriptors to spare, the port is there as before.
  EXPECT_OK(
      Connect("127.0.0.1", listener->port, absl::Now() + absl::Seconds(10), &failure).status());
}

}  // namespace
}  // namespace bulk
}  // namespace tensorgrid
