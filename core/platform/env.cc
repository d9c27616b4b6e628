#include "core/platform/env.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

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

int64_t AvailableMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  int64_t bytes = pages > 0 && page_bytes > 0 ? int64_t{pages} * page_bytes : 0;
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");  // "max" when unlimited
  int64_t limit = 0;
  if (cgroup >> limit && limit > 0 && (bytes == 0 || limit < bytes)) bytes = limit;
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
