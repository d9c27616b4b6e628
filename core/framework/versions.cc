#include "core/framework/versions.h"

#include "core/platform/status.h"

namespace tensorgrid {

VersionDef CurrentGraphDefVersions() {
  VersionDef versions;
  versions.set_producer(kGraphDefVersion);
  versions.set_min_consumer(kGraphDefVersionMinConsumer);
  return versions;
}

absl::Status CheckGraphDefVersions(const VersionDef& versions) {
  if (versions.producer() < kGraphDefVersionMinProducer) {
    return errors::InvalidArgument("GraphDef producer version ", versions.producer(),
                                   " is below the oldest producer tensorgrid runs graphs of, ",
                                   kGraphDefVersionMinProducer, "; please regenerate the graph");
  }
  if (versions.min_consumer() > kGraphDefVersion) {
    return errors::InvalidArgument(
        "GraphDef min consumer version ", versions.min_consumer(),
        " is above tensorgrid's GraphDef version ", kGraphDefVersion,
        ": the graph needs semantics of a newer TensorFlow than tensorgrid implements");
  }
  for (int bad : versions.bad_consumers()) {
    if (bad == kGraphDefVersion) {
      return errors::InvalidArgument("GraphDef disallows consumer version ", bad,
                                     ", tensorgrid's GraphDef version (the producer marked it "
                                     "as running the graph wrongly)");
    }
  }
  return absl::OkStatus();
}

}  // namespace tensorgrid
