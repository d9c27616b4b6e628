#include "core/platform/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

#include "absl/base/const_init.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

absl::Mutex hook_mu(absl::kConstInit);
std::function<void(const std::string&)>* atomic_write_hook ABSL_GUARDED_BY(hook_mu) = nullptr;

void AtAtomicWriteHook(const std::string& temp) {
  std::function<void(const std::string&)> hook;
  {
    absl::MutexLock lock(&hook_mu);
    if (atomic_write_hook == nullptr) return;
    hook = *atomic_write_hook;
  }
  hook(temp);
}

// Random, and different in a forked child than in its parent.
uint64_t RandomSuffix() {
  static absl::Mutex mu(absl::kConstInit);
  static std::mt19937_64* rng = nullptr;
  static pid_t rng_pid = 0;
  absl::MutexLock lock(&mu);
  if (rng == nullptr || rng_pid != ::getpid()) {
    rng_pid = ::getpid();
    std::random_device device;
    std::seed_seq seed{device(),
                       device(),
                       device(),
                       device(),
                       static_cast<unsigned>(rng_pid),
                       static_cast<unsigned>(time(nullptr))};
    delete rng;
    rng = new std::mt19937_64(seed);
  }
  return (*rng)();
}

// Makes a rename in `dir` durable.
absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, "opening directory", dir);
  if (::fsync(fd) != 0 && errno != EINVAL) {  // some file systems cannot sync directories
    const int err = errno;
    ::close(fd);
    return ErrnoToStatus(err, "syncing directory", dir);
  }
  ::close(fd);
  return absl::OkStatus();
}

}  // namespace

absl::Status ErrnoToStatus(int err, absl::string_view what, const std::string& path) {
  const std::string msg = absl::StrCat(what, " '", path, "': ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR: return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
    case EROFS: return absl::PermissionDeniedError(msg);
    case ENOSPC:
    case EDQUOT:
    case EFBIG: return absl::ResourceExhaustedError(msg);
    default: return absl::UnknownError(msg);
  }
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::string JoinPath(const std::string& dir, const std::string& path) {
  if (absl::StartsWith(path, "/") || dir.empty() || dir == ".") return path;
  return absl::EndsWith(dir, "/") ? dir + path : absl::StrCat(dir, "/", path);
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path, absl::string_view what) {
  const std::string reading = absl::StrCat("cannot read ", what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, reading, path);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof(buf));
    if (r < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return ErrnoToStatus(err, reading, path);
    }
    if (r == 0) break;
    out.append(buf, static_cast<size_t>(r));
  }
  ::close(fd);
  return out;
}

std::string TempPath(const std::string& path) {
  return absl::StrCat(path, kTempMarker, absl::StrFormat("%016x", RandomSuffix()));
}

absl::Status WriteAll(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, "writing", path);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::Status SyncAndClose(int fd, const std::string& path) {
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoToStatus(err, "syncing", path);
  }
  if (::close(fd) != 0) return ErrnoToStatus(errno, "closing", path);
  return absl::OkStatus();
}

absl::Status RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("renaming '", from, "' to"), to);
  }
  return SyncDirectory(Dirname(to));
}

absl::Status WriteWholeFile(const std::string& path, absl::string_view contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoToStatus(errno, "creating", path);
  absl::Status s = WriteAll(fd, contents.data(), contents.size(), path);
  if (!s.ok()) {
    ::close(fd);
    ::unlink(path.c_str());
    return s;
  }
  s = SyncAndClose(fd, path);
  if (!s.ok()) ::unlink(path.c_str());
  return s;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  const std::string temp = TempPath(path);
  TG_RETURN_IF_ERROR(WriteWholeFile(temp, contents));
  AtAtomicWriteHook(temp);
  absl::Status s = RenameFile(temp, path);
  if (!s.ok()) ::unlink(temp.c_str());
  return s;
}

absl::Status CreateDirectories(const std::string& dir) {
  if (dir.empty() || dir == "." || dir == "/") return absl::OkStatus();
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat("'", dir, "' exists and is not a directory"));
  }
  TG_RETURN_IF_ERROR(CreateDirectories(Dirname(dir)));
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoToStatus(errno, "creating directory", dir);
  }
  return absl::OkStatus();
}

void SetAtomicWriteHookForTesting(std::function<void(const std::string& temp)> hook) {
  absl::MutexLock lock(&hook_mu);
  delete atomic_write_hook;
  atomic_write_hook = hook ? new std::function<void(const std::string&)>(std::move(hook)) : nullptr;
}

}  // namespace tensorgrid
