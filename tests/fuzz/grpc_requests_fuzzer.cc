// The gRPC services' requests (distributed/rpc/grpc_worker_service.cc,
// grpc_master_service.cc): for each of the 21 methods, what its handler does
// with the request's bytes before it hands the request to the worker or the
// master. Callback methods parse the raw ByteBuffer themselves
// (ParseFromByteBuffer, across its slices); the others get it parsed by
// gRPC (SerializationTraits); RunGraph, RunStep and RunCallable also arrive
// on the bulk port as one string. Then each checks what it checks: the feeds
// of a step (feed_decoding.h), the graph of RegisterGraph, CreateSession and
// ExtendSession (ImportGraphDef, which the worker and master run first), the
// joins of CompleteGroup and CompleteInstance (collective_requests.h, then
// the group leader's ValidateGroupJoin and ValidateInstanceJoin).
// A request is either refused with InvalidArgument (ResourceExhausted for a
// tensor over the limit) or accepted; nothing crashes.
//
// Input: byte 0 picks the method (and, bit 7, the bulk port's string for the
// three step methods); bytes 1-2 split the rest into up to three slices.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph/graph.h"
#include "core/runtime/collective_group_leader.h"
#include "distributed/rpc/collective_requests.h"
#include "distributed/rpc/feed_decoding.h"
#include "distributed/rpc/tensor_coding.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/support/byte_buffer.h"
#include "proto/master.pb.h"
#include "proto/worker.pb.h"
#include "tests/fuzz/fuzz_util.h"

namespace tensorgrid {
namespace {

void ExpectRefusal(const absl::Status& status, absl::string_view what) {
  if (status.ok()) return;
  fuzz::ExpectError(status,
                    {absl::StatusCode::kInvalidArgument, absl::StatusCode::kResourceExhausted},
                    what);
}

void CheckGraph(const GraphDef& def, absl::string_view method) {
  ExpectRefusal(ImportGraphDef(def).status(), absl::StrCat(method, "'s graph"));
}

// The request as a handler sees it: false when it does not parse (the
// handler answers InvalidArgument, or gRPC does).
template <typename Request>
bool Parse(const grpc::ByteBuffer& wire, const std::string& flat, bool callback, bool bulk_port,
           Request* request) {
  if (bulk_port) return request->ParseFromString(flat);
  if (callback) return ParseFromByteBuffer(wire, request);
  grpc::ByteBuffer copy(wire);  // Deserialize consumes it
  return grpc::SerializationTraits<Request>::Deserialize(&copy, request).ok();
}

struct Method {
  const char* name;
  bool callback;  // raw ByteBuffer on gRPC's callback API
  bool on_bulk_port;
  std::function<void(const grpc::ByteBuffer&, const std::string&, bool bulk_port)> serve;
};

// The longest a join may wait: the worker service's bound (its calls' own
// deadlines, at most an hour).
constexpr absl::Duration kMaxWait = absl::Hours(1);

// A method whose handler does no more than parse (and copy fields out).
template <typename Request>
Method ParseOnly(const char* name, bool callback = false) {
  return {name, callback, false,
          [callback](const grpc::ByteBuffer& wire, const std::string& flat, bool bulk_port) {
            Request request;
            Parse(wire, flat, callback, bulk_port, &request);
          }};
}

const std::vector<Method>& Methods() {
  static const auto* methods = new std::vector<Method>{
      // WorkerService.
      ParseOnly<GetStatusRequest>("GetStatus"),
      ParseOnly<CreateWorkerSessionRequest>("CreateWorkerSession"),
      ParseOnly<DeleteWorkerSessionRequest>("DeleteWorkerSession"),
      {"RegisterGraph", false, false,
       [](const grpc::ByteBuffer& wire, const std::string& flat, bool bulk_port) {
         RegisterGraphRequest request;
         if (Parse(wire, flat, false, bulk_port, &request)) {
           CheckGraph(request.graph_def(), "RegisterGraph");
         }
       }},
      ParseOnly<DeregisterGraphRequest>("DeregisterGraph"),
      {"RunGraph", true, true,
       [](const grpc::ByteBuffer& wire, const std::string& flat, bool bulk_port) {
         RunGraphRequest request;
         if (!Parse(wire, flat, true, bulk_port, &request)) return;
         std::vector<Tensor> feeds;
         ExpectRefusal(DecodeRunGraphFeeds(request.send(), &feeds), "RunGraph's feeds");
       }},
      ParseOnly<CleanupGraphRequest>("CleanupGraph"),
      ParseOnly<CleanupAllRequest>("CleanupAll"),
      ParseOnly<RecvTensorRequest>("RecvTensor", true),
      {"CompleteGroup", true, false,
       [](const grpc::ByteBuffer& wire, const std::string& flat, bool bulk_port) {
         CompleteGroupRequest request;
         if (!Parse(wire, flat, true, bulk_port, &request)) return;
         ExpectRefusal(ValidateGroupJoin(GroupJoinFromRequest(request, kMaxWait)),
                       "CompleteGroup's join");
       }},
      {"CompleteInstance", true, false,
       [](const grpc::ByteBuffer& wire, const std::string& flat, bool bulk_port) {
         CompleteInstanceRequest request;
         if (!Parse(wire, flat, true, bulk_port, &request)) return;
         ExpectRefusal(ValidateInstanceJoin(InstanceJoinFromRequest(request, kMaxWait)),
                       "CompleteInstance's join");
       }},
      ParseOnly<RecvBufRequest>("RecvBuf", true),
      // MasterService.
      {"CreateSession", false, false,
       [](const grpc::ByteBuffer& wire, const std::string& flat, bool bulk_port) {
         CreateSessionRequest request;
         if (Parse(wire, flat, false, bulk_port, &request)) {
           CheckGraph(request.graph_def(), "CreateSession");
         }
       }},
      {"ExtendSession", false, false,
       [](const grpc::ByteBuffer& wire, const std::string& flat, bool bulk_port) {
         ExtendSessionRequest request;
         if (Parse(wire, flat, false, bulk_port, &request)) {
           CheckGraph(request.graph_def(), "ExtendSession");
         }
       }},
      {"RunStep", true, true,
       [](const grpc::ByteBuffer& wire, const std::string& flat, bool bulk_port) {
         RunStepRequest request;
         if (!Parse(wire, flat, true, bulk_port, &request)) return;
         ExpectRefusal(DecodeRunStepFeeds(request.feed()).status(), "RunStep's feeds");
       }},
      ParseOnly<MakeCallableRequest>("MakeCallable"),
      {"RunCallable", true, true,
       [](const grpc::ByteBuffer& wire, const std::string& flat, bool bulk_port) {
         RunCallableRequest request;
         if (!Parse(wire, flat, true, bulk_port, &request)) return;
         ExpectRefusal(DecodeRunCallableFeeds(request.feed()).status(), "RunCallable's feeds");
       }},
      ParseOnly<ReleaseCallableRequest>("ReleaseCallable"),
      ParseOnly<CloseSessionRequest>("CloseSession"),
      ParseOnly<ListDevicesRequest>("ListDevices"),
      ParseOnly<ResetRequest>("Reset"),
  };
  return *methods;
}

// `bytes` as a ByteBuffer of up to three slices, cut at `a` and `b`.
grpc::ByteBuffer Sliced(const std::string& bytes, size_t a, size_t b) {
  a = std::min(a, bytes.size());
  b = std::min(std::max(a, b), bytes.size());
  std::vector<grpc::Slice> slices;
  for (auto [from, to] : {std::pair{size_t{0}, a}, {a, b}, {b, bytes.size()}}) {
    if (to > from) slices.emplace_back(bytes.data() + from, to - from);
  }
  return grpc::ByteBuffer(slices.data(), slices.size());  // an empty request has no slices
}

}  // namespace
}  // namespace tensorgrid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensorgrid::fuzz::Init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensorgrid;
  fuzz::Input in(data, size);
  const uint8_t pick = in.Byte();
  const size_t a = in.Byte(), b = a + in.Byte();
  const std::string request = in.Rest();
  const Method& method = Methods()[(pick & 0x7f) % Methods().size()];
  const bool bulk_port = (pick & 0x80) != 0 && method.on_bulk_port;
  method.serve(Sliced(request, a, b), request, bulk_port);
  return 0;
}
