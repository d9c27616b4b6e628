#include "distributed/transport/bulk_route.h"

#include <cstdio>
#include <utility>

#include "absl/synchronization/notification.h"
#include "core/framework/tensor_codec.h"
#include "core/framework/types.h"
#include "core/platform/status.h"

namespace tensorgrid {

void BulkRoute::Known::Learn(int learned) {
  // Not the refused port again (nothing listens there: not a restart, a firewall).
  if (learned != 0 && learned == refused.load()) return;
  port.store(learned);
  if (learned != 0) refused.store(0);  // a new port: the old refusal is moot
}

BulkRoute::BulkRoute(Options options)
    : options_(std::move(options)), client_(options_.host, options_.addressee) {}

BulkRoute::~BulkRoute() = default;

void BulkRoute::Learn(int port) { known_->Learn(port); }

int BulkRoute::PortFor(absl::Time deadline) {
  // The port waits at most kBulkMaxWait for an answer; longer waits keep to gRPC.
  if (unreachable_.load() || deadline - absl::Now() > kBulkMaxWait) return 0;
  const int port = known_->port.load();
  if (port != 0 || !options_.discover || known_->asked.exchange(true)) return port;
  // Not known yet: ask in the background; this request goes over gRPC. The
  // answer touches only what it holds, so it may come after the route is gone.
  options_.discover([known = known_](std::optional<int> learned) {
    if (learned) {
      known->Learn(*learned);
    } else {
      known->asked.store(false);  // ask again next time
    }
  });
  return 0;
}

void BulkRoute::MarkUnreachable(const absl::Status& why) {
  if (unreachable_.exchange(true)) return;
  std::fprintf(stderr, "tensorgrid: %s: %s; its bulk port is no longer used\n",
               options_.peer.c_str(), std::string(why.message()).c_str());
}

void BulkRoute::NotServed(int port, BulkClient::Fallback fallback, const absl::Status& why) {
  if (fallback == BulkClient::Fallback::kPortUnreachable) {
    MarkUnreachable(why);
  } else if (fallback == BulkClient::Fallback::kPortRefused || absl::IsFailedPrecondition(why)) {
    // Nothing listens there, or another task does: the peer may have
    // restarted on another port, which it names next time.
    known_->refused.store(port);
    int known = port;
    if (known_->port.compare_exchange_strong(known, 0)) known_->asked.store(false);
  }
}

void BulkRoute::CallAsync(const std::string& method, Request request, absl::Time deadline,
                          CallDone done, OverGrpc over_grpc) {
  const int port = PortFor(deadline);
  if (port == 0) return over_grpc(deadline);
  client_.CallAsync(
      port, options_.token, method, request(), deadline,
      [this, port, deadline, done = std::move(done), over_grpc = std::move(over_grpc)](
          absl::Status s, std::string answer, BulkClient::Fallback fallback) {
        if (fallback == BulkClient::Fallback::kNone) {
          return done(std::move(s), std::move(answer));
        }
        NotServed(port, fallback, s);  // it never ran: over gRPC
        over_grpc(deadline);
      });
}

bool BulkRoute::Call(const std::string& method, Request request, absl::Time deadline,
                     absl::Status* status, std::string* answer) {
  const int port = PortFor(deadline);
  if (port == 0) return false;
  struct Result {
    absl::Notification done;
    absl::Status status;
    std::string answer;
    BulkClient::Fallback fallback = BulkClient::Fallback::kNone;
  };
  auto result = std::make_shared<Result>();
  client_.Call(port, options_.token, method, request(), deadline,
               [result](absl::Status s, std::string answer, BulkClient::Fallback fallback) {
                 result->status = std::move(s);
                 result->answer = std::move(answer);
                 result->fallback = fallback;
                 result->done.Notify();
               });
  // Bounded: the client ends every call by its deadline.
  result->done.WaitForNotification();
  if (result->fallback != BulkClient::Fallback::kNone) {
    NotServed(port, result->fallback, result->status);
    return false;
  }
  *status = std::move(result->status);
  *answer = std::move(result->answer);
  return true;
}

void BulkRoute::RecvTensorAsync(int64_t step_id, const std::string& key, absl::Time deadline,
                                Tensor* out, StatusCallback done, OverGrpc over_grpc) {
  const int port = out != nullptr ? PortFor(deadline) : 0;
  if (port == 0 || port == known_->no_recv_tensor.load()) return over_grpc(deadline);
  client_.RecvTensorAsync(
      port, options_.token, step_id, key, deadline, out,
      [this, port, deadline, done = std::move(done), over_grpc = std::move(over_grpc)](
          absl::Status s, BulkClient::Fallback fallback) {
        if (fallback == BulkClient::Fallback::kNone) return done(std::move(s));
        if (fallback == BulkClient::Fallback::kOverGrpc &&
              (absl::IsUnimplemented(s) || absl::IsUnavailable(s))) {
          known_->no_recv_tensor.store(port);  // refused, or hung up on, unread
        }
        NotServed(port, fallback, s);
        over_grpc(deadline);  // gRPC gets what is left of its time
      });
}

void BulkRoute::RecvTensorsAsync(int64_t step_id, const std::vector<std::string>& keys,
                                 absl::Time deadline, std::vector<Tensor>* outs,
                                 ItemDone received, OverGrpc over_grpc) {
  const int port = PortFor(deadline);
  if (port == 0 || port == known_->no_recv_tensor.load() ||
      port == known_->no_recv_tensors.load()) {
    return over_grpc(deadline);
  }
  // Which keys came, for the ones a failed request leaves.
  auto answered = std::make_shared<std::vector<bool>>(keys.size(), false);
  client_.RecvTensorsAsync(
      port, options_.token, step_id, keys, deadline, outs,
      [answered, received](int i, absl::Status s) {
        (*answered)[i] = true;
        received(i, std::move(s));
      },
      [this, port, deadline, answered, received, over_grpc = std::move(over_grpc)](
          absl::Status s, BulkClient::Fallback fallback) {
        if (fallback != BulkClient::Fallback::kNone) {
          if (fallback == BulkClient::Fallback::kOverGrpc &&
              (absl::IsUnimplemented(s) || absl::IsUnavailable(s))) {
            known_->no_recv_tensors.store(port);  // refused, or hung up on, unread
          }
          NotServed(port, fallback, s);
          return over_grpc(deadline);
        }
        if (s.ok()) s = errors::DataLoss("RecvTensors ended without answering every key");
        for (size_t i = 0; i < answered->size(); ++i) {
          if (!(*answered)[i]) received(static_cast<int>(i), s);
        }
      });
}

void BulkRoute::RecvBufAsync(const std::string& key, absl::Time deadline, Tensor* tensor,
                             StatusCallback done, OverGrpc over_grpc) {
  // Only plain dtypes travel there (collectives reduce numbers).
  const bool suits =
      tensor != nullptr && !(tensor->IsInitialized() && DataTypeIsObject(tensor->dtype()));
  const int port = suits ? PortFor(deadline) : 0;
  if (port == 0) return over_grpc(deadline);
  client_.RecvBufAsync(
      port, options_.token, key, deadline, tensor, tensor,
      [this, port, deadline, done = std::move(done), over_grpc = std::move(over_grpc)](
          absl::Status s, BulkClient::Fallback fallback) {
        if (fallback == BulkClient::Fallback::kNone) return done(std::move(s));
        NotServed(port, fallback, s);
        over_grpc(deadline);
      });
}

void BulkRoute::FetchTicketAsync(int port, std::string id, Tensor tensor, Tensor* out,
                                 absl::Duration timeout, StatusCallback done, OverGrpc over_grpc) {
  known_->port.store(port);  // the peer serves it now, refused before or not
  char* dst = static_cast<char*>(tensor.raw_data());
  const size_t bytes = tensor.TotalBytes();
  const absl::Time deadline = absl::Now() + timeout;
  client_.FetchAsync(
      port, std::move(id), dst, bytes, deadline,
      [this, tensor = std::move(tensor), out, deadline, done = std::move(done),
       over_grpc = std::move(over_grpc)](absl::Status s, BulkClient::Fallback fallback) mutable {
        if (s.ok()) {
          CanonicalizeBools(&tensor);  // the peer's bytes, as they came
          *out = std::move(tensor);
        }
        if (fallback == BulkClient::Fallback::kNone) return done(std::move(s));
        // The ticket is still there: its bytes over gRPC. The peer has just
        // answered over gRPC, so a refused connection is a firewall too.
        if (fallback == BulkClient::Fallback::kPortUnreachable ||
            fallback == BulkClient::Fallback::kPortRefused) {
          MarkUnreachable(s);
        }
        over_grpc(deadline);
      });
}

}  // namespace tensorgrid
