// oneDNN (Debian's libdnnl 2.6, OpenMP runtime) for the nn kernels, over
// kernels/onednn.h (the engine, the threads' streams, scratchpad buffers):
// image memory descriptors in either data_format, a bounded per-shape cache
// of primitives, and Execute, which runs a primitive on the calling
// thread's stream with the session's intra-op thread count.
//
//   static PrimitiveCache<PoolForward> cache;
//   const int threads = UseIntraOpThreads(ctx);
//   auto entry = cache.Get(absl::StrCat(threads, "/", shape_key),
//                          [&] { return MakePoolForward(...); });
//   TG_RETURN_IF_ERROR(Execute(ctx, entry->primitive, {{DNNL_ARG_SRC, src}, ...}));
//
// oneDNN reports errors by throwing dnnl::error; Guard turns a throw into an
// Internal status, so no exception leaves a kernel.
#ifndef TENSORGRID_KERNELS_NN_ONEDNN_H_
#define TENSORGRID_KERNELS_NN_ONEDNN_H_

#include <array>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/op_kernel.h"
#include "core/util/window_geometry.h"
#include "kernels/onednn.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace tensorgrid {
namespace nn {

// A 4-D f32 image of logical dims {N, C, H, W} laid out as `format`.
dnnl::memory::desc ImageDesc(const std::array<int64_t, 4>& nchw, DataFormat format);
// A 1-D f32 vector of `n`.
dnnl::memory::desc VectorDesc(int64_t n);

// Memory over a tensor's buffer (oneDNN does not copy; it must outlive the call).
dnnl::memory Memory(const dnnl::memory::desc& desc, const void* data);

// Sets the calling thread's OpenMP thread count to the device's intra-op
// thread count and returns it. oneDNN expects a primitive to run with the
// thread count it was created with (its batch-norm kernels, for one, split
// work at creation and were 10-50x slower otherwise), so call this before
// creating a primitive and make the count part of the cache key.
int UseIntraOpThreads(const OpKernelContext& ctx);

// Every primitive here is made with these attrs: its scratchpad (where
// oneDNN's kernels keep temporaries, batch norm its threads' barrier) comes
// with each call instead of living in the primitive, so that two devices (or
// two steps) may run one cached primitive at once. A library-owned
// scratchpad is shared by concurrent calls, and two mirrored replicas'
// batch norms deadlocked on it.
dnnl::primitive_attr UserScratchpad();

// Runs `primitive` to completion on the calling thread (UseIntraOpThreads
// again, for a primitive made on another thread), with a scratchpad of its
// own when the primitive asks for one.
absl::Status Execute(const OpKernelContext& ctx, const dnnl::primitive& primitive,
                     const std::unordered_map<int, dnnl::memory>& args);

// Calls fn, turning a dnnl::error into Internal ("oneDNN <what>: ...").
absl::Status Guard(const char* what, const std::function<absl::Status()>& fn);

// Primitives (and their descriptors) by shape key, least recently used
// dropped past `capacity`. Thread-safe; entries are immutable and shared, so
// one in use stays alive after it is dropped.
template <typename Entry>
class PrimitiveCache {
 public:
  explicit PrimitiveCache(size_t capacity = 64) : capacity_(capacity) {}

  // The entry for `key`, made by `make` (outside the lock) if absent.
  std::shared_ptr<const Entry> Get(const std::string& key, const std::function<Entry()>& make) {
    {
      absl::MutexLock lock(&mu_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
      }
    }
    auto entry = std::make_shared<const Entry>(make());
    absl::MutexLock lock(&mu_);
    if (index_.count(key)) return entry;  // made twice; keep the first
    order_.emplace_front(key, entry);
    index_[key] = order_.begin();
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return entry;
  }

  size_t size() const {
    absl::MutexLock lock(&mu_);
    return order_.size();
  }

 private:
  using Item = std::pair<std::string, std::shared_ptr<const Entry>>;
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::list<Item> order_ ABSL_GUARDED_BY(mu_);  // most recent first
  std::unordered_map<std::string, typename std::list<Item>::iterator> index_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nn
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_NN_ONEDNN_H_
