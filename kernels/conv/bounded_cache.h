// A small thread-safe map from keys to shared values that keeps at most
// `capacity` entries, dropping the least recently used. The convolution
// kernels keep their oneDNN primitives in one, keyed by the full geometry:
//
//   BoundedCache<ConvKey, ConvPrimitive> cache(64);
//   TG_ASSIGN_OR_RETURN(std::shared_ptr<const ConvPrimitive> p,
//                       cache.GetOrCreate(key, [&] { return BuildPrimitive(key); }));
//
// A value handed out stays alive while its holder uses it, even if evicted.
// `create` runs outside the lock; two threads missing on one key may both
// build it, and the first to finish is kept.
#ifndef TENSORGRID_KERNELS_CONV_BOUNDED_CACHE_H_
#define TENSORGRID_KERNELS_CONV_BOUNDED_CACHE_H_

#include <cstddef>
#include <list>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace tensorgrid {

template <typename Key, typename Value>
class BoundedCache {
 public:
  explicit BoundedCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // The cached value for `key`, or the one `create()` returns
  // (absl::StatusOr<std::unique_ptr<Value>>), which is then cached. Errors
  // are returned and not cached.
  template <typename Create>
  absl::StatusOr<std::shared_ptr<const Value>> GetOrCreate(const Key& key, Create&& create) {
    if (std::shared_ptr<const Value> hit = Find(key)) return hit;
    absl::StatusOr<std::unique_ptr<Value>> made = create();
    if (!made.ok()) return made.status();
    std::shared_ptr<const Value> value(std::move(*made));
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it != index_.end()) return it->second->second;  // another thread won
    order_.emplace_front(key, value);
    index_[key] = order_.begin();
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return value;
  }

  size_t size() const {
    absl::MutexLock lock(&mu_);
    return order_.size();
  }

  // The cached value for `key` (now the most recently used), or null.
  std::shared_ptr<const Value> Find(const Key& key) {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);  // now the most recent
    return it->second->second;
  }

 private:
  using Entry = std::pair<Key, std::shared_ptr<const Value>>;

  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::list<Entry> order_ ABSL_GUARDED_BY(mu_);  // most recently used first
  absl::flat_hash_map<Key, typename std::list<Entry>::iterator> index_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_CONV_BOUNDED_CACHE_H_
