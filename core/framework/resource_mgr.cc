#include "core/framework/resource_mgr.h"

namespace tensorgrid {

absl::Status ResourceMgr::Delete(const std::string& container, const std::string& name) {
  absl::MutexLock lock(&mu_);
  if (resources_.erase(Key{container, name}) == 0) {
    return errors::NotFound("resource '", name, "' not found in container '", container, "'");
  }
  return absl::OkStatus();
}

void ResourceMgr::Cleanup(const std::string& container) {
  absl::MutexLock lock(&mu_);
  absl::erase_if(resources_, [&](const auto& kv) { return kv.first.first == container; });
}

void ResourceMgr::Clear() {
  absl::flat_hash_map<Key, Entry> dropped;
  {
    absl::MutexLock lock(&mu_);
    dropped.swap(resources_);
  }
}

}  // namespace tensorgrid
