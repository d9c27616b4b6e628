// How much of a training step's all-reduce time ran while backprop was still
// computing: the measure of gradient bucketing (strategy.h's
// MirroredStrategy::Options::bytes_per_pack), read from a traced step.
//
//   RunOptions options;
//   options.set_trace_level(RunOptions::FULL_TRACE);
//   RunMetadata metadata;
//   TG_RETURN_IF_ERROR(session->Run(options, feeds, {}, {train_op.name()}, nullptr, &metadata));
//   std::cout << distribute::MeasureAllReduceOverlap(metadata.step_stats()).ToString();
//
// Per device of the step: backprop is every node under a "gradients" name
// scope (where AddSymbolicGradients builds them), from the first one's start
// to the last one's end; the all-reduces are the CollectiveReduce nodes, each
// from its launch to its completion (waiting for the peers included). An
// all-reduce's time before its device's backprop ended is hidden behind it.
#ifndef TENSORGRID_CLIENT_DISTRIBUTE_OVERLAP_H_
#define TENSORGRID_CLIENT_DISTRIBUTE_OVERLAP_H_

#include <string>

#include "proto/step_stats.pb.h"

namespace tensorgrid {
namespace distribute {

struct AllReduceOverlap {
  int all_reduces = 0;          // CollectiveReduce runs, all devices together
  int started_in_backprop = 0;  // those launched before their device's backprop ended
  double all_reduce_ms = 0;     // their summed time, launch to completion
  double hidden_ms = 0;         // the part of it before the backprop ended
  double backprop_ms = 0;       // summed over devices: first gradient node's start to last's end

  // "3 all-reduces, 2 started during backprop; 0.41 of 0.93 ms hidden
  // behind backprop (1.20 ms)".
  std::string ToString() const;
};

AllReduceOverlap MeasureAllReduceOverlap(const StepStats& stats);

}  // namespace distribute
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_DISTRIBUTE_OVERLAP_H_
