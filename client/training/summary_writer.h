// SummaryWriter: TensorBoard's event files, as TensorFlow's FileWriter
// writes them, so that `tensorboard --logdir DIR` shows a run's scalars and
// graph (docs/tensorboard.md).
//
//   TG_ASSIGN_OR_RETURN(std::unique_ptr<training::SummaryWriter> writer,
//                       training::SummaryWriter::Create("/tmp/logs/run1"));
//   TG_RETURN_IF_ERROR(writer->AddGraph(graph_def));
//   TG_RETURN_IF_ERROR(writer->AddScalar("loss", 0.25, /*step=*/100));
//   TG_RETURN_IF_ERROR(writer->Close());
//
// Create makes the directory (mkdir -p) and a new file in it,
// "events.out.tfevents.<10-digit Unix seconds>.<hostname>" (TensorFlow's
// name; ".1", ".2", ... appended when that name is taken), whose first
// record, written at once, is an Event carrying only file_version
// "brain.Event:2". Each event is a TFRecord record (core/util/tfrecord.h)
// holding an Event (proto/event.proto) with its wall time and step.
//
// Buffering is bounded: added events wait in memory until `max_queue` of
// them are pending, or the oldest has waited `flush_interval` (checked as
// events are added: there is no thread), then they are written in one
// write. Flush and Close also fsync. A write that fails is returned, and
// every later call returns the same error, naming the file: nothing is
// dropped silently.
//
// Thread-safe.
#ifndef TENSORGRID_CLIENT_TRAINING_SUMMARY_WRITER_H_
#define TENSORGRID_CLIENT_TRAINING_SUMMARY_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/event.pb.h"
#include "proto/graph.pb.h"

namespace tensorgrid {
namespace training {

// TensorFlow's current event file version, the first record of every file.
inline constexpr char kEventFileVersion[] = "brain.Event:2";

struct SummaryWriterOptions {
  // Events held in memory before they are written (TensorFlow's max_queue); >= 1.
  int max_queue = 10;
  // Pending events are written once the oldest is this old (TensorFlow's
  // flush_secs); zero writes every event at once.
  absl::Duration flush_interval = absl::Seconds(120);
  // Appended to the file name (TensorFlow's filename_suffix).
  std::string filename_suffix;
};

class SummaryWriter {
 public:
  // InvalidArgument for bad options; the directory's or the file's error
  // (FailedPrecondition when a part of `logdir` is a file, PermissionDenied,
  // ...) with "SummaryWriter: logdir '<logdir>'" in front.
  static absl::StatusOr<std::unique_ptr<SummaryWriter>> Create(
      const std::string& logdir, SummaryWriterOptions options = SummaryWriterOptions());
  // Closes the file (as Close) if it is open; an error goes to stderr.
  ~SummaryWriter();

  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // One Summary with one scalar (simple_value, a float) at `step`.
  absl::Status AddScalar(absl::string_view tag, double value, int64_t step);
  // Several scalars in one event at `step`, in this order.
  absl::Status AddScalars(const std::vector<std::pair<std::string, double>>& values,
                          int64_t step);
  // The graph TensorBoard draws (Event.graph_def), at step 0.
  absl::Status AddGraph(const GraphDef& graph);
  // Any event; a wall_time of 0 is set to now.
  absl::Status AddEvent(Event event);

  // Writes the pending events and fsyncs the file.
  absl::Status Flush();
  // Flush, then closes the file; later calls fail with FailedPrecondition.
  // Closing twice returns the first Close's result.
  absl::Status Close();

  // The event file's path.
  const std::string& path() const { return path_; }

 private:
  SummaryWriter(std::string path, int fd, SummaryWriterOptions options)
      : path_(std::move(path)), fd_(fd), options_(std::move(options)) {}

  absl::Status WritePending() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  absl::Mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_);  // -1 once closed
  const SummaryWriterOptions options_;
  std::string pending_ ABSL_GUARDED_BY(mu_);  // framed records not yet written
  int pending_events_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time oldest_pending_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);  // the first failure, returned from then on
  absl::Status close_status_ ABSL_GUARDED_BY(mu_);  // once closed
};

// Every event of the file at `path`, in order (TensorFlow's
// summary_iterator): the file's read error, DataLoss for a damaged record
// or an Event that does not parse.
absl::StatusOr<std::vector<Event>> ReadEventFile(const std::string& path);

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_SUMMARY_WRITER_H_
