// BulkClient's ticket fetches: the bytes of a tensor a gRPC answer handed
// out a ticket for, read from the sender's bulk port straight into the
// tensor's buffer.
#include <sys/socket.h>

#include <cerrno>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/platform/status.h"
#include "distributed/transport/bulk_client.h"
#include "distributed/transport/frames.h"

namespace tensorgrid {

absl::Status BulkClient::Fetch(int port, const std::string& id, char* dst, size_t bytes,
                               absl::Time deadline, Fallback* fallback) {
  Fallback ignored;
  if (fallback == nullptr) fallback = &ignored;
  *fallback = Fallback::kNone;
  if (id.size() != kBulkTicketBytes) {
    return errors::InvalidArgument("a bulk ticket has ", kBulkTicketBytes, " bytes, not ",
                                   id.size());
  }
  const std::string where = absl::StrCat("bulk port ", host(), ":", port);
  const std::string request = bulk::EncodeTicketRequest(id);
  for (;;) {
    if (absl::Now() >= deadline) {
      return errors::DeadlineExceeded("the deadline passed before fetching from the ", where);
    }
    bool pooled = false;
    bulk::ConnectFailure failure = bulk::ConnectFailure::kUnreachable;
    absl::StatusOr<bulk::UniqueFd> connected = pool_.Connect(port, deadline, &pooled, &failure);
    if (!connected.ok()) {
      *fallback = FallbackFor(failure);
      return connected.status();
    }
    bulk::UniqueFd fd = *std::move(connected);
    bulk::SetTimeout(fd.get(), SO_SNDTIMEO, deadline - absl::Now());
    char header[bulk::TicketAnswer::kBytes];
    size_t got = 0;
    if (bulk::WriteFull(fd.get(), request))
      got = bulk::ReadFull(fd.get(), header, sizeof(header), deadline);
    const bool timed_out = errno == EAGAIN || errno == EWOULDBLOCK;
    if (got == 0 && !timed_out) {
      // Hung up before answering: the server never took the ticket.
      const std::string why = bulk::Errno();
      fd.reset();
      if (pooled) {  // it had closed an idle connection: so, likely, the others
        pool_.DropIdle(port);
        continue;
      }
      *fallback = Fallback::kOverGrpc;  // at its connection limit, or stopping
      return errors::Unavailable("the ", where, " hung up before answering: ", why);
    }
    if (got == sizeof(header)) {
      const bulk::TicketAnswer answer = bulk::TicketAnswer::Decode(header);
      if (answer.code == bulk::TicketAnswer::kUnknownTicket) {
        pool_.Release(port, std::move(fd));
        return errors::NotFound("the ", where,
                                " no longer holds the ticket (fetched already, expired, or the "
                                "task restarted)");
      }
      if (answer.code != bulk::TicketAnswer::kOk || answer.length != bytes) {
        return errors::DataLoss("the ", where, " answered code ", static_cast<int>(answer.code),
                                " with ", answer.length, " bytes; expected ", bytes);
      }
      if (bulk::ReadFull(fd.get(), dst, bytes, deadline) == bytes) {
        pool_.Release(port, std::move(fd));
        return absl::OkStatus();
      }
    }
    return bulk::IoFailure(absl::StrCat(
        got == sizeof(header) ? "reading the tensor" : "reading the answer", " from the ", where));
  }
}

void BulkClient::FetchAsync(int port, std::string id, char* dst, size_t bytes, absl::Time deadline,
                            FetchCallback done) {
  auto fetch_done = std::make_shared<FetchCallback>(std::move(done));
  const bool queued = Schedule([this, port, id = std::move(id), dst, bytes, deadline, fetch_done] {
    Fallback fallback = Fallback::kNone;
    absl::Status s = Fetch(port, id, dst, bytes, deadline, &fallback);
    // A fallback is not taken from a client being destroyed: see Waiting::Finish.
    if (fallback != Fallback::kNone && closing_.load()) {
      s = Closing("a bulk fetch");
      fallback = Fallback::kNone;
    }
    (*fetch_done)(std::move(s), fallback);
  });
  if (!queued) (*fetch_done)(Closing("a bulk fetch"), Fallback::kNone);
}

}  // namespace tensorgrid
