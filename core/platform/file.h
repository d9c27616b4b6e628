// Files: whole-file reads and writes, atomic replacement, directories, and
// the path and errno helpers behind them. POSIX only.
//
//   TG_ASSIGN_OR_RETURN(std::string text, ReadFileToString("/ckpt/checkpoint"));
//   TG_RETURN_IF_ERROR(CreateDirectories("/ckpt"));
//   TG_RETURN_IF_ERROR(WriteFileAtomically("/ckpt/checkpoint", text));
//
// Errors name the operation and the path ("creating '/x': No such file or
// directory") with a code from errno (ErrnoToStatus): NotFound for a missing
// file, PermissionDenied, ResourceExhausted for a full disk, else Unknown.
// Thread-safe.
#ifndef TENSORGRID_CORE_PLATFORM_FILE_H_
#define TENSORGRID_CORE_PLATFORM_FILE_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tensorgrid {

// The status for errno `err` of `what` ("creating", "renaming 'a' to") on
// `path`: "<what> '<path>': <strerror>".
absl::Status ErrnoToStatus(int err, absl::string_view what, const std::string& path);

// "a/b/c" -> "a/b"; "c" -> "."; "/c" -> "/".
std::string Dirname(const std::string& path);
// "a/b/c" -> "c".
std::string Basename(const std::string& path);
// `path` relative to `dir`: "a" + "b" -> "a/b", "a/" + "b" -> "a/b"; an
// absolute `path`, or a `dir` of "" or ".", gives `path` itself.
std::string JoinPath(const std::string& dir, const std::string& path);

// Whether `path` names a regular file (following symbolic links).
bool IsRegularFile(const std::string& path);
// Whether anything (a file, directory, or dangling link) is at `path`.
bool PathExists(const std::string& path);

// The whole file. Errors say "cannot read <what> '<path>': <strerror>"
// (NotFound when it does not exist); `what` says what the file is for
// ("graph file", "TLS key").
absl::StatusOr<std::string> ReadFileToString(const std::string& path,
                                             absl::string_view what = "file");
// Writes a complete file at `path` (created or truncated) and syncs it;
// removes it again when a write fails.
absl::Status WriteWholeFile(const std::string& path, absl::string_view contents);
// Writes `contents` to `path` through a temporary file in the same directory
// that is synced and renamed over `path`, then syncs the directory: readers
// see the old contents or the new ones, even across a crash.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);
// mkdir -p. FailedPrecondition when a part of `dir` is not a directory.
absl::Status CreateDirectories(const std::string& dir);

// `path` plus a marker and a random suffix: a name of its own in the same
// directory, for a file that is renamed over `path` once complete. Names made
// so start with `path` + kTempMarker.
inline constexpr char kTempMarker[] = ".tempstate";
std::string TempPath(const std::string& path);
// Writes all `n` bytes at `p` to `fd`; errors name `path`.
absl::Status WriteAll(int fd, const char* p, size_t n, const std::string& path);
// fsync, then close (closed in every case).
absl::Status SyncAndClose(int fd, const std::string& path);
// Renames `from` over `to` and syncs the directory of `to`, so the rename
// survives a crash.
absl::Status RenameFile(const std::string& from, const std::string& to);

// Called by WriteFileAtomically once the temporary file `temp` is written
// and synced, before the rename; nullptr (the default) turns it off. For
// crash tests only: the hook is process-wide.
void SetAtomicWriteHookForTesting(std::function<void(const std::string& temp)> hook);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_PLATFORM_FILE_H_
