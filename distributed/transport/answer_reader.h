// The client's readers of the answers to direct requests (frames.h), one
// per kind of answer, each called once the kind byte was read. Each reads
// the rest of its answer through the connection's Incoming within
// `deadline` and says whether the connection is at a request's boundary
// again (it may go back to the pool once nothing is left ahead); a read
// that failed leaves it broken (close it). `what` names the request in
// errors ("RunGraph call from the bulk port h:p"); it is called only when
// something fails, so an answer that arrives whole builds no string.
#ifndef TENSORGRID_DISTRIBUTED_TRANSPORT_ANSWER_READER_H_
#define TENSORGRID_DISTRIBUTED_TRANSPORT_ANSWER_READER_H_

#include <atomic>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "core/framework/tensor.h"
#include "distributed/transport/frames.h"
#include "distributed/transport/socket.h"

namespace tensorgrid {
namespace bulk {

struct AnswerRead {
  absl::Status status;       // what the request comes to
  bool reusable = false;     // the connection may carry another request
  bool from_server = false;  // `status` is the server's error answer, read whole
};
using What = absl::FunctionRef<std::string()>;

// kError or kNotServed (`kind`): the server's status, with its code, message
// and payloads. After a refusal (kNotServed) or a wrong token the server
// hangs up, and after any DataLoss (a body that does not parse, say) the
// connection is not trusted: not reusable.
AnswerRead ReadErrorAnswer(Incoming& in, AnswerKind kind, absl::Time deadline, What what);
// kBytes: a call's answer, at most kMaxAnswerBytes, into `*answer`.
AnswerRead ReadBytesAnswer(Incoming& in, absl::Time deadline, What what, std::string* answer);
// kProto: a RecvTensor's tensor of strings, as a TensorProto, into `*out`.
AnswerRead ReadProtoAnswer(Incoming& in, absl::Time deadline, What what, Tensor* out);
// An answer of a kind the request cannot get (`kind`): DataLoss, naming it.
AnswerRead UnexpectedAnswer(AnswerKind kind, What what);
// kTensor or kInPlace (`in_place`): a tensor of a plain dtype into `*out`,
// in `into`'s buffer when it has the tensor's dtype and element count (a
// collective's chunk), else in a fresh one (DataLoss when `into` is given
// but does not match). An in-place answer is copied out of the server's
// memory (in_place.h); when that is refused, `*in_place_refused` is set and
// the bytes come on the connection. A header that cannot be (a rank over
// kMaxRank, say) is DataLoss.
AnswerRead ReadTensorAnswer(Incoming& in, bool in_place, absl::Time deadline, What what,
                            const Tensor* into, Tensor* out, std::atomic<bool>* in_place_refused);

// kItem, one of a RecvTensors' answers, after its kind byte: its index,
// set in `*index` (-1 when there is none to trust), and that key's own
// answer into `(*outs)[*index]`: kTensor, kInPlace (when
// `may_read_in_place`), kProto, or kError (the key's error: `from_server`).
// An index out of range or already `answered`, or another kind inside, is
// DataLoss.
AnswerRead ReadItemAnswer(Incoming& in, absl::Time deadline, What what, bool may_read_in_place,
                          const std::vector<bool>& answered, std::vector<Tensor>* outs,
                          std::atomic<bool>* in_place_refused, int* index);

}  // namespace bulk
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_TRANSPORT_ANSWER_READER_H_
