#include "core/platform/env.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/algorithm/container.h"
#include "absl/strings/str_split.h"

#define EIGEN_USE_THREADS
#include "unsupported/Eigen/CXX11/ThreadPool"

namespace tensorgrid {

int64_t NowMicros() { return NowNanos() / 1000; }

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint32_t CurrentThreadId() {
  static std::atomic<uint32_t> next{1};
  thread_local uint32_t id = next.fetch_add(1);
  return id;
}

int NumSchedulableCPUs() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

namespace {

// A positive number at the start of `file`, or 0 ("max", missing, garbage).
int64_t ReadLimit(const std::string& file) {
  std::ifstream in(file);
  int64_t value = 0;
  return in >> value && value > 0 ? value : 0;
}

}  // namespace

int64_t CgroupMemoryLimit(const std::string& cgroup_root, const std::string& self_cgroup) {
  int64_t limit = 0;
  std::istringstream lines(self_cgroup);
  std::string line;
  while (std::getline(lines, line)) {  // "hierarchy:controllers:path"
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    std::string dir, file;
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {  // v2
      dir = cgroup_root;
      file = "/memory.max";
    } else if (absl::c_linear_search(absl::StrSplit(controllers, ','), "memory")) {  // v1
      dir = cgroup_root + "/memory";
      file = "/memory.limit_in_bytes";
    } else {
      continue;
    }
    if (path.empty() || path[0] != '/') continue;
    while (true) {  // the cgroup, then each ancestor up to the root
      const int64_t here = ReadLimit(dir + (path == "/" ? "" : path) + file);
      if (here > 0 && (limit == 0 || here < limit)) limit = here;
      if (path == "/") break;
      const size_t slash = path.rfind('/');
      path = slash == 0 ? "/" : path.substr(0, slash);
    }
  }
  return limit;
}

int64_t AvailableMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  int64_t bytes = pages > 0 && page_bytes > 0 ? int64_t{pages} * page_bytes : 0;
  std::ifstream in("/proc/self/cgroup");
  std::stringstream self;
  self << in.rdbuf();
  const int64_t limit = CgroupMemoryLimit("/sys/fs/cgroup", self.str());
  if (limit > 0 && (bytes == 0 || limit < bytes)) bytes = limit;
  return bytes;
}

ThreadPool::ThreadPool(int num_threads)
    : pool_(std::make_unique<Eigen::ThreadPool>(num_threads < 1 ? 1 : num_threads)) {}

ThreadPool::~ThreadPool() = default;

void ThreadPool::Schedule(std::function<void()> fn) { pool_->Schedule(std::move(fn)); }

int ThreadPool::NumThreads() const { return pool_->NumThreads(); }

int ThreadPool::CurrentThreadId() const { return pool_->CurrentThreadId(); }

Eigen::ThreadPoolInterface* ThreadPool::AsEigenThreadPool() { return pool_.get(); }

}  // namespace tensorgrid
