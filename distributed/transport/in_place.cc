#include "distributed/transport/in_place.h"

#include <sys/uio.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/match.h"

namespace tensorgrid {
namespace bulk {

bool InPlaceAllowed(const std::string& host) {
  const char* env = std::getenv("TG_BULK_IN_PLACE");
  if (env != nullptr && (std::string(env) == "0" || std::string(env) == "false")) return false;
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

namespace {

// Whether process `pid` holds `nonce` at `address` (errno set when it could
// not be read).
bool HoldsNonce(pid_t pid, uintptr_t address, const std::string& nonce, bool* read) {
  char seen[kNonceBytes];
  iovec local{seen, kNonceBytes};
  iovec remote{reinterpret_cast<void*>(address), kNonceBytes};
  *read = process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(kNonceBytes);
  return *read && std::memcmp(seen, nonce.data(), kNonceBytes) == 0;
}

}  // namespace

InPlaceCopy CopyInPlace(const InPlaceLocation& where, char* dst, size_t length) {
  const pid_t pid = static_cast<pid_t>(where.pid);
  // First that `pid` is the server (not another process of that number in
  // our namespace): it holds this answer's nonce at that address.
  bool read = false;
  if (!HoldsNonce(pid, where.nonce_address, where.nonce, &read)) {
    // Not readable (EPERM, ESRCH, ENOSYS) or another process: refused; a
    // bad address: this copy failed.
    return !read && errno == EFAULT ? InPlaceCopy::kFailed : InPlaceCopy::kRefused;
  }
  size_t done = 0;
  while (done < length) {
    iovec local{dst + done, length - done};
    iovec remote{reinterpret_cast<void*>(where.address + done), length - done};
    const ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0) return InPlaceCopy::kFailed;
    done += static_cast<size_t>(n);
  }
  // Then that it still does: the server wipes the nonce before it lets the
  // chunk go, so a nonce found after the copy proves that the chunk was held
  // while it was read.
  if (!HoldsNonce(pid, where.nonce_address, where.nonce, &read)) return InPlaceCopy::kFailed;
  return InPlaceCopy::kCopied;
}

void WipeNonce(std::string* nonce) {
  explicit_bzero(nonce->data(), nonce->size());  // never elided as a dead store
  // Ordered before what follows (letting the chunk go), for the compiler
  // and the CPU.
  std::atomic_thread_fence(std::memory_order_release);
}

}  // namespace bulk
}  // namespace tensorgrid
