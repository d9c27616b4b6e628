// ToChromeTrace: a step's RunMetadata as Chrome trace-event JSON, for
// chrome://tracing and ui.perfetto.dev.
//
//   RunOptions options;
//   options.set_trace_level(RunOptions::FULL_TRACE);
//   options.set_output_partition_graphs(true);  // optional: exact transfer matching
//   RunMetadata metadata;
//   TG_RETURN_IF_ERROR(session->Run(options, feeds, fetches, {}, &outputs, &metadata));
//   WriteFile("step.json", ToChromeTrace(metadata));
//
// The trace has one process per device (named by a process_name metadata
// event, ordered ps, worker 0, worker 1, ... by device name) and one thread
// per executor thread. Every NodeExecStats becomes a complete ("X") event:
// name = node name, cat = op, ts/dur in microseconds from the nanosecond
// fields (the micros fields when those are unset) relative to the step's
// first event, args = timeline label, output shapes and bytes.
//
// Transfers are drawn as arrows: each _Send is joined to its _Recv by a flow
// start ("s") and a flow end ("f", bound to the enclosing _Recv slice) with
// the same id. The pair is matched by the `tensor_name` attr when the metadata
// carries partition graphs, and otherwise by the names Partition gives them
// (_send_<src>_<tag>_to_<dev> / _recv_<src>_<tag>_on_<dev>) and the peer
// device in the executor's label ("... _Send 16 bytes to /job:...").
//
// A transfer whose other end is missing (the peer's stats were not
// collected) keeps its slice and gets no arrow.
#ifndef TENSORGRID_CORE_RUNTIME_TRACE_H_
#define TENSORGRID_CORE_RUNTIME_TRACE_H_

#include <string>

#include "proto/config.pb.h"

namespace tensorgrid {

// A JSON object {"traceEvents":[...], "displayTimeUnit":"ns", "otherData":{...}}.
std::string ToChromeTrace(const RunMetadata& metadata);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_TRACE_H_
