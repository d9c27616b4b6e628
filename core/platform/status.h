// Status helpers: Debian's Abseil (20220623) has absl::Status but not the
// return/assign macros, so the two we use live here.
//
//   TG_RETURN_IF_ERROR(graph.Validate());
//   TG_ASSIGN_OR_RETURN(auto kernel, CreateKernel(node));
#ifndef TENSORGRID_CORE_PLATFORM_STATUS_H_
#define TENSORGRID_CORE_PLATFORM_STATUS_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#define TG_STATUS_CONCAT_INNER_(a, b) a##b
#define TG_STATUS_CONCAT_(a, b) TG_STATUS_CONCAT_INNER_(a, b)

#define TG_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status tg_status_ = (expr);      \
    if (!tg_status_.ok()) return tg_status_; \
  } while (0)

#define TG_ASSIGN_OR_RETURN(lhs, expr) \
  TG_ASSIGN_OR_RETURN_IMPL_(TG_STATUS_CONCAT_(tg_statusor_, __LINE__), lhs, expr)

#define TG_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

namespace tensorgrid {

// Returns `status` with `context + ": "` prepended to its message; OK stays OK.
inline absl::Status WithContext(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  absl::Status out(status.code(), absl::StrCat(context, ": ", status.message()));
  status.ForEachPayload(
      [&out](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

namespace errors {
// absl::StrCat-style constructors: errors::InvalidArgument("node '", name, "' ...").
#define TG_DEFINE_ERROR_(Name, Code)                                    \
  template <typename... Args>                                           \
  absl::Status Name(const Args&... args) {                              \
    return absl::Status(absl::StatusCode::Code, absl::StrCat(args...)); \
  }
TG_DEFINE_ERROR_(InvalidArgument, kInvalidArgument)
TG_DEFINE_ERROR_(NotFound, kNotFound)
TG_DEFINE_ERROR_(AlreadyExists, kAlreadyExists)
TG_DEFINE_ERROR_(FailedPrecondition, kFailedPrecondition)
TG_DEFINE_ERROR_(Unimplemented, kUnimplemented)
TG_DEFINE_ERROR_(Internal, kInternal)
TG_DEFINE_ERROR_(Unavailable, kUnavailable)
TG_DEFINE_ERROR_(Aborted, kAborted)
TG_DEFINE_ERROR_(Cancelled, kCancelled)
TG_DEFINE_ERROR_(DeadlineExceeded, kDeadlineExceeded)
TG_DEFINE_ERROR_(OutOfRange, kOutOfRange)
TG_DEFINE_ERROR_(ResourceExhausted, kResourceExhausted)
TG_DEFINE_ERROR_(Unauthenticated, kUnauthenticated)
TG_DEFINE_ERROR_(DataLoss, kDataLoss)
#undef TG_DEFINE_ERROR_
}  // namespace errors

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_PLATFORM_STATUS_H_
