// Clocks and thread pools.
#ifndef TENSORGRID_CORE_PLATFORM_ENV_H_
#define TENSORGRID_CORE_PLATFORM_ENV_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace Eigen {
class ThreadPoolInterface;
}

namespace tensorgrid {

int64_t NowMicros();
int64_t NowNanos();

// Small id of the calling thread, stable for its lifetime (for step stats).
uint32_t CurrentThreadId();

// Number of cores this process may use.
int NumSchedulableCPUs();

// Bytes of memory this process may use: the machine's, or its cgroup's
// limit where that is lower (CgroupMemoryLimit over /proc/self/cgroup and
// /sys/fs/cgroup).
int64_t AvailableMemoryBytes();

// The memory limit of the cgroup that `self_cgroup` (the text of
// /proc/self/cgroup) names under `cgroup_root` (where the cgroup file
// system is mounted): the lowest memory.max of the process's cgroup v2
// directory and its ancestors, or of memory/.../memory.limit_in_bytes for
// cgroup v1; 0 when no limit is set or readable.
int64_t CgroupMemoryLimit(const std::string& cgroup_root, const std::string& self_cgroup);

// A fixed-size pool of worker threads (Eigen's non-blocking work-stealing
// pool underneath). Thread-safe. Destruction waits for queued work.
class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> fn);
  int NumThreads() const;
  // Index of the calling thread in this pool, or -1 if it is not one of ours.
  int CurrentThreadId() const;
  Eigen::ThreadPoolInterface* AsEigenThreadPool();

 private:
  std::unique_ptr<Eigen::ThreadPoolInterface> pool_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_PLATFORM_ENV_H_
