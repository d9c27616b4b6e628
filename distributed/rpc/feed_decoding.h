// The tensors a step request carries, decoded and checked before the step
// runs: RunGraph's feeds (worker service), RunStep's and RunCallable's
// (master service), whether they came over gRPC or the bulk port. Pure
// functions of the parsed request, so that what a hostile request can do to
// them is tested on its own (tests/fuzz/grpc_requests_fuzzer.cc).
//
//   std::vector<Tensor> feeds;
//   TG_RETURN_IF_ERROR(DecodeRunGraphFeeds(request.send(), &feeds));
#ifndef TENSORGRID_DISTRIBUTED_RPC_FEED_DECODING_H_
#define TENSORGRID_DISTRIBUTED_RPC_FEED_DECODING_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/framework/tensor.h"
#include "google/protobuf/repeated_field.h"
#include "proto/worker.pb.h"

namespace tensorgrid {

// RunGraph: feeds named by their _Arg index as text, in any order; each
// index in [0, n) appears exactly once. `*feeds` gets them by index.
// InvalidArgument naming the feed (or ResourceExhausted for a tensor over
// the size limit).
absl::Status DecodeRunGraphFeeds(const google::protobuf::RepeatedPtrField<NamedTensorProto>& send,
                                 std::vector<Tensor>* feeds);

// RunStep: feeds named by tensor ("x:0"), in the request's order.
// InvalidArgument naming the feed that does not decode.
absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> DecodeRunStepFeeds(
    const google::protobuf::RepeatedPtrField<NamedTensorProto>& feed);

// RunCallable: feeds by position. InvalidArgument naming the position.
absl::StatusOr<std::vector<Tensor>> DecodeRunCallableFeeds(
    const google::protobuf::RepeatedPtrField<TensorProto>& feed);

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_FEED_DECODING_H_
