// Reading a chunk straight out of a server's memory: between tasks on one
// machine, a client copies a large chunk with process_vm_readv (one copy)
// instead of receiving it over TCP (two copies, and the sender's CPU). The
// server's answer says where the chunk lies (frames.h: InPlaceLocation) and
// holds it until the client says it is done.
#ifndef TENSORGRID_DISTRIBUTED_TRANSPORT_IN_PLACE_H_
#define TENSORGRID_DISTRIBUTED_TRANSPORT_IN_PLACE_H_

#include <cstddef>
#include <string>

#include "distributed/transport/frames.h"

namespace tensorgrid {
namespace bulk {

// Chunks from this size on are read in place when the client may.
constexpr size_t kInPlaceMinBytes = 64 << 10;

// Whether a client of a server on `host` may read in place: `host` is this
// machine's loopback, and TG_BULK_IN_PLACE is not "0" or "false".
bool InPlaceAllowed(const std::string& host);

enum class InPlaceCopy {
  kCopied,
  kRefused,  // not allowed (no ptrace permission), or not that process: ask no more
  kFailed,   // this copy failed (the memory moved): the bytes come on the connection
};
// Copies `length` bytes at `where.address` in process `where.pid` to `dst`,
// after checking that the process holds `where.nonce` at
// `where.nonce_address` (process ids are per namespace: the nonce proves
// the process is the server that answered), and checks again after the
// copy: a server wipes an answer's nonce (WipeNonce) before it lets the
// chunk go, so a copy followed by the nonce was made while the chunk was
// held (kFailed otherwise: the server gave up on the answer).
InPlaceCopy CopyInPlace(const InPlaceLocation& where, char* dst, size_t length);
// The server's side: overwrites `nonce` so that no client finds it any
// more; the stores are complete before whatever the caller does next (such
// as letting the chunk go).
void WipeNonce(std::string* nonce);

}  // namespace bulk
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_TRANSPORT_IN_PLACE_H_
