// GraphDef versions: which GraphDefs tensorgrid consumes and with what
// semantics (docs/graphs.md, "GraphDef versions").
//
// A GraphDef's `versions` says which TensorFlow-compatible producer wrote it
// (`producer`), the oldest consumer that may run it (`min_consumer`) and
// consumers it refuses (`bad_consumers`). tensorgrid consumes as TensorFlow's
// GraphDef version kGraphDefVersion does, and the graphs its client builds
// say so. A few semantics depend on the producer, as in TensorFlow:
//
//   producer <= 21  a Placeholder whose shape attr has no dims (and no
//                   unknown_rank) has an unknown shape, not a scalar's
//   producer <  21  Sum/Mean/Max take reduction indices of any rank
//
// A GraphDef without `versions` has producer 0: it is read as TensorFlow
// reads graphs written before versioning.
#ifndef TENSORGRID_CORE_FRAMEWORK_VERSIONS_H_
#define TENSORGRID_CORE_FRAMEWORK_VERSIONS_H_

#include "absl/status/status.h"
#include "proto/versions.pb.h"

namespace tensorgrid {

// TensorFlow's GraphDef version whose semantics tensorgrid implements
// (TensorFlow 2.10's, 2022-07-05; versions after 30 advance by date and
// change no semantics tensorgrid implements).
inline constexpr int kGraphDefVersion = 1183;
// The oldest producer tensorgrid runs graphs of (TensorFlow's is 0 too).
inline constexpr int kGraphDefVersionMinProducer = 0;
// The oldest consumer that may run graphs tensorgrid's client writes.
inline constexpr int kGraphDefVersionMinConsumer = 0;

// The last producer whose Placeholder with a dimensionless shape attr means
// "any shape" (TensorFlow enforced scalar placeholders from version 22).
inline constexpr int kLastProducerWithUnknownEmptyPlaceholderShape = 21;
// The first producer whose reduction indices must have rank <= 1.
inline constexpr int kFirstProducerWithVectorReductionIndices = 21;

// The versions the client stamps on the graphs it builds.
VersionDef CurrentGraphDefVersions();

// OK if tensorgrid may run a graph with these versions: producer at least
// kGraphDefVersionMinProducer, min_consumer at most kGraphDefVersion, and
// kGraphDefVersion not among bad_consumers. InvalidArgument saying which,
// as TensorFlow does.
absl::Status CheckGraphDefVersions(const VersionDef& versions);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_VERSIONS_H_
