// Rewrites a graph for one step signature: fed tensors come from `_Arg`
// nodes, fetched tensors go to `_Retval` nodes (both index into the step's
// CallFrame), and everything that neither a fetch nor a target needs is pruned.
#ifndef TENSORGRID_CORE_GRAPH_SUBGRAPH_H_
#define TENSORGRID_CORE_GRAPH_SUBGRAPH_H_

#include <string>
#include <vector>

#include "core/framework/tensor_shape.h"
#include "core/graph/graph.h"

namespace tensorgrid {

// What a feed must look like: its dtype, and for a fed Placeholder its
// declared shape (unknown rank otherwise).
struct FeedSpec {
  std::string name;  // as given ("x" or "x:1")
  DataType dtype = DT_INVALID;
  PartialTensorShape shape;
};

// Feeds and fetches are tensor names ("x", "x:1"), targets node names.
// NotFound for unknown nodes; InvalidArgument for a bad port, a duplicate
// feed, or a fed ref output. `feed_specs` gets one entry per feed, in order.
absl::Status RewriteGraphForExecution(Graph* graph, const std::vector<std::string>& feeds,
                                      const std::vector<std::string>& fetches,
                                      const std::vector<std::string>& targets,
                                      std::vector<FeedSpec>* feed_specs);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_GRAPH_SUBGRAPH_H_
