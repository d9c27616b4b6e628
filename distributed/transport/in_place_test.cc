// Chunks read in place between tasks on one machine (in_place.h), with
// scripted peers that speak the wire format byte by byte.
#include "distributed/transport/in_place.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/framework/rendezvous.h"
#include "core/framework/tensor.h"
#include "core/platform/status.h"
#include "distributed/transport/bulk_client.h"
#include "distributed/transport/bulk_server.h"
#include "distributed/transport/test_util.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace bulk_test {
namespace {

// Reads one direct RecvBuf request from `fd`; returns its flags.
uint32_t ReadRecvBufRequest(int fd) {
  char fixed[4 + 4 + 4 + 4 + 4 + 8];
  EXPECT_EQ(recv(fd, fixed, sizeof(fixed), MSG_WAITALL), static_cast<ssize_t>(sizeof(fixed)));
  EXPECT_EQ(std::string(fixed, 4), "TGR5");
  auto u32 = [&](int at) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= static_cast<uint32_t>(static_cast<uint8_t>(fixed[at + i])) << (8 * i);
    return v;
  };
  std::string rest(u32(4) + u32(8) + u32(12), '\0');  // token, addressee, key
  EXPECT_EQ(recv(fd, rest.data(), rest.size(), MSG_WAITALL), static_cast<ssize_t>(rest.size()));
  return u32(16);
}

void Put(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Whether this process may use process_vm_readv at all (a seccomp profile
// can forbid it; the client then takes every chunk from the connection).
bool CanReadProcessMemory() {
  char from[8] = "canread", to[8] = {};
  iovec local{to, sizeof(to)}, remote{from, sizeof(from)};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == sizeof(from);
}

TEST(BulkInPlaceTest, LargeChunksFromThisMachineArriveIntact) {
  const bool in_place_possible = CanReadProcessMemory();
  if (!in_place_possible)
    std::cerr << "process_vm_readv is not allowed here: every chunk comes on the connection\n";
  // A loopback client may copy chunks of 64 KiB or more straight out of the
  // server's memory; smaller ones come on the connection. Both must land.
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  BulkClient client("127.0.0.1");
  int64_t in_place = 0;
  for (int64_t n : {int64_t{1000}, int64_t{1} << 14, int64_t{1} << 20}) {
    const std::string key = absl::StrCat("k", n);
    const Tensor chunk = Ramp(n);
    source.Release(key, chunk);
    const Tensor into(DT_FLOAT, TensorShape({n}));
    Tensor out;
    const auto result = Ask(client, server->port(), key, &out, &into);
    ASSERT_TRUE(result->status.ok()) << n << ": " << result->status;
    EXPECT_TRUE(out.SharesBufferWith(into));
    EXPECT_EQ(std::memcmp(out.raw_data(), chunk.raw_data(), chunk.TotalBytes()), 0) << n;
    // Chunks of 64 KiB (16384 floats) or more are copied in place.
    if (n * 4 >= (64 << 10) && in_place_possible) ++in_place;
    EXPECT_EQ(server->in_place_reads(), in_place) << n;
  }
}

// The client's watcher (the thread that sees answers come) reads a chunk
// of up to 256 KiB itself, copied in place or on the connection: no hand-off
// to another thread. A larger copy is made on the client's pool.
TEST(BulkInPlaceTest, TheWatcherCopiesChunksOfUpTo256KiBItselfLargerOnesArePooled) {
  if (!CanReadProcessMemory()) GTEST_SKIP() << "process_vm_readv is not allowed here";
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  BulkClient client("127.0.0.1");
  // 4 KiB on the connection, 256 KiB and 1 MiB in place.
  const std::vector<int64_t> floats = {1 << 10, 1 << 16, 1 << 18};
  std::vector<std::thread::id> read_on;
  for (int64_t n : floats) {
    const std::string key = absl::StrCat("k", n);
    const Tensor chunk = Ramp(n);
    source.Release(key, chunk);
    Tensor out;
    RecvBufResult result;
    std::thread::id ran_on;
    client.RecvBufAsync(server->port(), "", key, Soon(), nullptr, &out,
                        [&](absl::Status s, BulkClient::Fallback f) {
                          ran_on = std::this_thread::get_id();
                          result.Callback()(std::move(s), f);
                        });
    ASSERT_TRUE(result.Wait());
    ASSERT_TRUE(result.status.ok()) << n << ": " << result.status;
    EXPECT_EQ(std::memcmp(out.raw_data(), chunk.raw_data(), chunk.TotalBytes()), 0) << n;
    read_on.push_back(ran_on);
  }
  EXPECT_EQ(server->in_place_reads(), 2);
  EXPECT_EQ(read_on[1], read_on[0]);  // the watcher
  EXPECT_NE(read_on[2], read_on[0]);  // a thread of the pool
}

TEST(BulkInPlaceTest, ServerSendsTheBytesWhenTheClientCannotCopy) {
  // A scripted client asks for an in-place answer, then says 'S'.
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  const Tensor chunk = Ramp(1 << 16);  // 256 KiB
  source.Release("k", chunk);
  const int fd = ConnectToLoopback(server->port());
  ASSERT_GE(fd, 0);
  std::string request = "TGR5";
  Put(&request, 0, 4);      // no token
  Put(&request, 0, 4);      // any addressee
  Put(&request, 1, 4);      // key "k"
  Put(&request, 1, 4);      // may read in place
  Put(&request, 10000, 8);  // wait 10 s
  request += "k";
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  // kInPlaceAnswer, dtype, rank 1, the dimension, the length, pid, address,
  // nonce address, nonce.
  char answer[1 + 4 + 4 + 8 + 8 + 8 + 8 + 8 + 16];
  ASSERT_EQ(recv(fd, answer, sizeof(answer), MSG_WAITALL), static_cast<ssize_t>(sizeof(answer)));
  EXPECT_EQ(answer[0], 5);
  const char verdict = 'S';
  ASSERT_EQ(send(fd, &verdict, 1, MSG_NOSIGNAL), 1);
  std::vector<char> bytes(chunk.TotalBytes());
  ASSERT_EQ(recv(fd, bytes.data(), bytes.size(), MSG_WAITALL), static_cast<ssize_t>(bytes.size()));
  EXPECT_EQ(std::memcmp(bytes.data(), chunk.raw_data(), bytes.size()), 0);
  EXPECT_EQ(server->in_place_reads(), 0);
  close(fd);
}

TEST(BulkInPlaceTest, ClientThatCopiedSaysSoAndNeedsNoWordBack) {
  if (!CanReadProcessMemory()) GTEST_SKIP() << "process_vm_readv is not allowed here";
  // A scripted client copies the chunk itself (the server is this process)
  // and says 'D': the server answers nothing more, and serves the next
  // request on the same connection.
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  const Tensor chunk = Ramp(1 << 16);  // 256 KiB
  source.Release("k", chunk);
  source.Release("m", Ramp(4));
  const int fd = ConnectToLoopback(server->port());
  ASSERT_GE(fd, 0);
  auto request = [](const std::string& key, bool in_place) {
    std::string r = "TGR5";
    Put(&r, 0, 4);  // no token
    Put(&r, 0, 4);  // any addressee
    Put(&r, key.size(), 4);
    Put(&r, in_place ? 1 : 0, 4);
    Put(&r, 10000, 8);  // wait 10 s
    return r + key;
  };
  const std::string first = request("k", true);
  ASSERT_EQ(send(fd, first.data(), first.size(), MSG_NOSIGNAL), static_cast<ssize_t>(first.size()));
  char answer[1 + 4 + 4 + 8 + 8 + 8 + 8 + 8 + 16];
  ASSERT_EQ(recv(fd, answer, sizeof(answer), MSG_WAITALL), static_cast<ssize_t>(sizeof(answer)));
  ASSERT_EQ(answer[0], 5);
  // After the kind and the tensor header (dtype, rank 1, the dimension,
  // the length): where the chunk lies.
  const bulk::InPlaceLocation where = bulk::InPlaceLocation::Decode(answer + 1 + 4 + 4 + 8 + 8);
  std::vector<char> copy(chunk.TotalBytes());
  ASSERT_EQ(bulk::CopyInPlace(where, copy.data(), copy.size()), bulk::InPlaceCopy::kCopied);
  EXPECT_EQ(std::memcmp(copy.data(), chunk.raw_data(), copy.size()), 0);
  const char verdict = 'D';
  ASSERT_EQ(send(fd, &verdict, 1, MSG_NOSIGNAL), 1);
  // The next answer is the next request's: a tensor answer (kind 0) of 4
  // floats, with no acknowledgement before it.
  const std::string second = request("m", false);
  ASSERT_EQ(send(fd, second.data(), second.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(second.size()));
  char next[1 + 4 + 4 + 8 + 8 + 16];
  ASSERT_EQ(recv(fd, next, sizeof(next), MSG_WAITALL), static_cast<ssize_t>(sizeof(next)));
  EXPECT_EQ(next[0], 0);
  EXPECT_EQ(server->in_place_reads(), 1);
  close(fd);
}

TEST(BulkInPlaceTest, ACopyCountsOnlyIfTheNonceOutlivesIt) {
  if (!CanReadProcessMemory()) GTEST_SKIP() << "process_vm_readv is not allowed here";
  // This process plays the server. The nonce is checked before the copy
  // (the right process) and after it (the chunk was still held: a server
  // wipes the nonce before it lets the chunk go).
  const Tensor chunk = Ramp(1024);
  std::string nonce = bulk::RandomBytes(bulk::kNonceBytes);
  ASSERT_EQ(nonce.size(), bulk::kNonceBytes);
  bulk::InPlaceLocation where;
  where.pid = static_cast<uint64_t>(getpid());
  where.address = reinterpret_cast<uintptr_t>(chunk.raw_data());
  where.nonce_address = reinterpret_cast<uintptr_t>(nonce.data());
  where.nonce = nonce;
  std::vector<char> copy(chunk.TotalBytes());
  EXPECT_EQ(bulk::CopyInPlace(where, copy.data(), copy.size()), bulk::InPlaceCopy::kCopied);
  EXPECT_EQ(std::memcmp(copy.data(), chunk.raw_data(), copy.size()), 0);

  // Wiped before the copy: not the answer this process gave (refused).
  std::string wiped = nonce;
  where.nonce_address = reinterpret_cast<uintptr_t>(wiped.data());
  bulk::WipeNonce(&wiped);
  EXPECT_EQ(wiped, std::string(bulk::kNonceBytes, '\0'));
  EXPECT_EQ(bulk::CopyInPlace(where, copy.data(), copy.size()), bulk::InPlaceCopy::kRefused);

  // Gone while the copy ran: the copy's destination is where the "server"
  // keeps the nonce, so the copy itself overwrites it, and the copy must
  // not count.
  std::vector<char> shared(chunk.TotalBytes());
  std::memcpy(shared.data() + 64, nonce.data(), bulk::kNonceBytes);
  where.nonce_address = reinterpret_cast<uintptr_t>(shared.data() + 64);
  EXPECT_EQ(bulk::CopyInPlace(where, shared.data(), shared.size()), bulk::InPlaceCopy::kFailed);
}

TEST(BulkInPlaceTest, InPlaceAnswerThatWasNotAskedForIsDataLoss) {
  // A client that may not read in place must not follow an address a server
  // hands it anyway.
  setenv("TG_BULK_IN_PLACE", "0", 1);
  BulkClient client("127.0.0.1");
  unsetenv("TG_BULK_IN_PLACE");
  int port = 0;
  const int listener = ListenOnLoopback(&port);
  ASSERT_GE(listener, 0);
  const Tensor chunk = Ramp(1 << 16);
  std::thread peer([&] {
    const int fd = accept(listener, nullptr, nullptr);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(ReadRecvBufRequest(fd) & 1u, 0u);
    std::string answer(1, '\5');
    Put(&answer, DT_FLOAT, 4);
    Put(&answer, 1, 4);
    Put(&answer, chunk.NumElements(), 8);
    Put(&answer, chunk.TotalBytes(), 8);
    Put(&answer, static_cast<uint64_t>(getpid()), 8);
    Put(&answer, reinterpret_cast<uintptr_t>(chunk.raw_data()), 8);
    Put(&answer, reinterpret_cast<uintptr_t>(chunk.raw_data()), 8);
    answer.append(static_cast<const char*>(chunk.raw_data()), 16);  // a "nonce" that matches
    send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
    char byte;
    EXPECT_LE(recv(fd, &byte, 1, 0), 0);  // hung up, no verdict
    close(fd);
  });
  Tensor out;
  const auto result = Ask(client, port, "k", &out);
  EXPECT_EQ(result->status.code(), absl::StatusCode::kDataLoss) << result->status;
  peer.join();
  close(listener);
}

TEST(BulkInPlaceTest, ChunkThatCannotBeReadInPlaceComesOnTheConnection) {
  // A scripted server answers in place with a process that is not itself
  // (a wrong nonce): the client must say so ('S'), take the bytes from the
  // connection, and not ask for in-place reads again.
  int port = 0;
  const int listener = ListenOnLoopback(&port);
  ASSERT_GE(listener, 0);
  const Tensor chunk = Ramp(1 << 16);  // 256 KiB
  std::thread peer([&] {
    const int fd = accept(listener, nullptr, nullptr);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(ReadRecvBufRequest(fd) & 1u, 1u);  // may read in place
    std::string answer(1, '\5');
    Put(&answer, DT_FLOAT, 4);
    Put(&answer, 1, 4);
    Put(&answer, chunk.NumElements(), 8);
    Put(&answer, chunk.TotalBytes(), 8);
    Put(&answer, static_cast<uint64_t>(getpid()), 8);
    Put(&answer, reinterpret_cast<uintptr_t>(chunk.raw_data()), 8);
    static const char kNonce[16] = "the real nonce.";
    Put(&answer, reinterpret_cast<uintptr_t>(kNonce), 8);
    answer += std::string(16, 'x');  // not what lies there
    ASSERT_EQ(send(fd, answer.data(), answer.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(answer.size()));
    char verdict = 0;
    ASSERT_EQ(recv(fd, &verdict, 1, MSG_WAITALL), 1);
    EXPECT_EQ(verdict, 'S');
    ASSERT_EQ(send(fd, chunk.raw_data(), chunk.TotalBytes(), MSG_NOSIGNAL),
              static_cast<ssize_t>(chunk.TotalBytes()));
    // The next request, on the same connection, no longer asks.
    EXPECT_EQ(ReadRecvBufRequest(fd) & 1u, 0u);
    std::string error(1, '\2');
    Put(&error, static_cast<uint64_t>(absl::StatusCode::kAborted), 4);
    Put(&error, 4 + 4, 4);
    Put(&error, 4, 4);
    error += "done";
    send(fd, error.data(), error.size(), MSG_NOSIGNAL);
    close(fd);
  });
  BulkClient client("127.0.0.1");
  Tensor out;
  const auto first = Ask(client, port, "k", &out);
  ASSERT_TRUE(first->status.ok()) << first->status;
  ASSERT_EQ(out.TotalBytes(), chunk.TotalBytes());
  EXPECT_EQ(std::memcmp(out.raw_data(), chunk.raw_data(), chunk.TotalBytes()), 0);
  const auto second = Ask(client, port, "k2", &out);
  EXPECT_EQ(second->status.code(), absl::StatusCode::kAborted) << second->status;
  peer.join();
  close(listener);
}

}  // namespace
}  // namespace bulk_test
}  // namespace tensorgrid
