#include "client/training/summary_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/platform/file.h"
#include "core/platform/status.h"
#include "core/util/tfrecord.h"

namespace tensorgrid {
namespace training {
namespace {

constexpr char kWho[] = "SummaryWriter";

std::string Hostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

double WallTime() { return absl::ToUnixMicros(absl::Now()) / 1e6; }

// Opens a new file named "<logdir>/events.out.tfevents.<secs>.<host><suffix>",
// with ".1", ".2", ... after it while that name is taken (two writers
// started in the same second).
absl::StatusOr<std::pair<std::string, int>> OpenNewEventFile(const std::string& logdir,
                                                             const std::string& suffix) {
  const std::string base =
      JoinPath(logdir, absl::StrFormat("events.out.tfevents.%010d.%s%s",
                                       absl::ToUnixSeconds(absl::Now()), Hostname(), suffix));
  for (int n = 0;; ++n) {
    const std::string path = n == 0 ? base : absl::StrCat(base, ".", n);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return std::make_pair(path, fd);
    if (errno != EEXIST || n >= 1000) return ErrnoToStatus(errno, "creating", path);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<SummaryWriter>> SummaryWriter::Create(const std::string& logdir,
                                                                     SummaryWriterOptions options) {
  if (logdir.empty()) return errors::InvalidArgument(kWho, ": the logdir is empty");
  if (options.max_queue < 1) {
    return errors::InvalidArgument(kWho, ": max_queue must be >= 1, not ", options.max_queue);
  }
  if (options.flush_interval < absl::ZeroDuration()) {
    return errors::InvalidArgument(kWho, ": flush_interval must not be negative");
  }
  if (options.filename_suffix.find('/') != std::string::npos) {
    return errors::InvalidArgument(kWho, ": filename_suffix '", options.filename_suffix,
                                   "' contains a '/'");
  }
  const std::string context = absl::StrCat(kWho, ": logdir '", logdir, "'");
  TG_RETURN_IF_ERROR(WithContext(CreateDirectories(logdir), context));
  absl::StatusOr<std::pair<std::string, int>> file =
      OpenNewEventFile(logdir, options.filename_suffix);
  TG_RETURN_IF_ERROR(WithContext(file.status(), context));
  std::unique_ptr<SummaryWriter> writer(
      new SummaryWriter(file->first, file->second, std::move(options)));
  Event version;
  version.set_file_version(kEventFileVersion);
  TG_RETURN_IF_ERROR(writer->AddEvent(std::move(version)));
  TG_RETURN_IF_ERROR(writer->Flush());
  return writer;
}

SummaryWriter::~SummaryWriter() {
  const absl::Status status = Close();
  if (!status.ok()) std::fprintf(stderr, "%s\n", status.ToString().c_str());
}

absl::Status SummaryWriter::AddScalar(absl::string_view tag, double value, int64_t step) {
  return AddScalars({{std::string(tag), value}}, step);
}

absl::Status SummaryWriter::AddScalars(const std::vector<std::pair<std::string, double>>& values,
                                       int64_t step) {
  Event event;
  event.set_step(step);
  for (const auto& [tag, value] : values) {
    if (tag.empty()) return errors::InvalidArgument(kWho, ": a scalar with an empty tag");
    Summary::Value* v = event.mutable_summary()->add_value();
    v->set_tag(tag);
    v->set_simple_value(static_cast<float>(value));
  }
  return AddEvent(std::move(event));
}

absl::Status SummaryWriter::AddGraph(const GraphDef& graph) {
  Event event;
  if (!graph.SerializeToString(event.mutable_graph_def())) {
    return errors::Internal(kWho, ": cannot serialize the GraphDef");
  }
  return AddEvent(std::move(event));
}

absl::Status SummaryWriter::AddEvent(Event event) {
  if (event.wall_time() == 0) event.set_wall_time(WallTime());
  std::string bytes;
  if (!event.SerializeToString(&bytes)) return errors::Internal(kWho, ": cannot serialize an Event");
  absl::MutexLock lock(&mu_);
  if (fd_ < 0) return errors::FailedPrecondition(kWho, ": '", path_, "' is closed");
  TG_RETURN_IF_ERROR(status_);
  if (pending_events_ == 0) oldest_pending_ = absl::Now();
  AppendRecord(bytes, &pending_);
  ++pending_events_;
  if (pending_events_ >= options_.max_queue ||
      absl::Now() - oldest_pending_ >= options_.flush_interval) {
    return WritePending();
  }
  return absl::OkStatus();
}

absl::Status SummaryWriter::WritePending() {
  TG_RETURN_IF_ERROR(status_);
  if (!pending_.empty()) {
    status_ = WithContext(WriteAll(fd_, pending_.data(), pending_.size(), path_), kWho);
    TG_RETURN_IF_ERROR(status_);
  }
  pending_.clear();
  pending_events_ = 0;
  return absl::OkStatus();
}

absl::Status SummaryWriter::FlushLocked() {
  TG_RETURN_IF_ERROR(WritePending());
  if (::fsync(fd_) != 0) status_ = WithContext(ErrnoToStatus(errno, "syncing", path_), kWho);
  return status_;
}

absl::Status SummaryWriter::Flush() {
  absl::MutexLock lock(&mu_);
  if (fd_ < 0) return errors::FailedPrecondition(kWho, ": '", path_, "' is closed");
  return FlushLocked();
}

absl::Status SummaryWriter::Close() {
  absl::MutexLock lock(&mu_);
  if (fd_ < 0) return close_status_;
  close_status_ = FlushLocked();
  if (::close(fd_) != 0 && close_status_.ok()) {
    close_status_ = WithContext(ErrnoToStatus(errno, "closing", path_), kWho);
  }
  fd_ = -1;
  return close_status_;
}

absl::StatusOr<std::vector<Event>> ReadEventFile(const std::string& path) {
  TG_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path, "event file"));
  absl::StatusOr<std::vector<std::string>> records = ParseRecords(contents);
  TG_RETURN_IF_ERROR(WithContext(records.status(), absl::StrCat("event file '", path, "'")));
  std::vector<Event> events(records->size());
  for (size_t i = 0; i < records->size(); ++i) {
    if (!events[i].ParseFromString((*records)[i])) {
      return errors::DataLoss("event file '", path, "': record ", i, " is not an Event");
    }
  }
  return events;
}

}  // namespace training
}  // namespace tensorgrid
