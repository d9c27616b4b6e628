// ResourceMgr: per-device, session-lifetime state (variables, queues, ...)
// addressed by (container, name). Thread-safe. Resources are shared_ptrs, so
// a kernel holding one keeps it alive even if the manager drops it.
//
//   TG_ASSIGN_OR_RETURN(std::shared_ptr<Var> var,
//       rm.LookupOrCreate<Var>("", "w", [] { return std::make_shared<Var>(DT_FLOAT); }));
#ifndef TENSORGRID_CORE_FRAMEWORK_RESOURCE_MGR_H_
#define TENSORGRID_CORE_FRAMEWORK_RESOURCE_MGR_H_

#include <functional>
#include <memory>
#include <string>
#include <typeindex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/tensor.h"
#include "core/platform/status.h"

namespace tensorgrid {

class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  virtual std::string TypeName() const = 0;
};

// A variable: a mutable tensor slot shared by the ops that read and update it.
// `mu` guards `tensor` and `initialized`; readers take a snapshot (a Tensor
// sharing the buffer), writers replace the buffer unless they own it alone.
class Var : public ResourceBase {
 public:
  explicit Var(DataType dtype, std::string name = "") : dtype_(dtype), name_(std::move(name)) {}
  std::string TypeName() const override { return "Var"; }
  DataType dtype() const { return dtype_; }
  // The variable's name, for error messages.
  const std::string& name() const { return name_; }

  absl::Mutex mu;
  Tensor tensor ABSL_GUARDED_BY(mu);
  bool initialized ABSL_GUARDED_BY(mu) = false;

 private:
  const DataType dtype_;
  const std::string name_;
};

class ResourceMgr {
 public:
  // AlreadyExists if (container, name) is taken.
  template <typename T>
  absl::Status Create(const std::string& container, const std::string& name, std::shared_ptr<T> r) {
    absl::MutexLock lock(&mu_);
    Key key{container, name};
    if (resources_.count(key)) {
      return errors::AlreadyExists("resource '", name, "' already exists in container '", container,
                                   "'");
    }
    resources_[key] = Entry{std::type_index(typeid(T)), std::move(r)};
    return absl::OkStatus();
  }

  // NotFound if absent; InvalidArgument if it is another type.
  template <typename T>
  absl::StatusOr<std::shared_ptr<T>> Lookup(const std::string& container,
                                            const std::string& name) const {
    absl::MutexLock lock(&mu_);
    auto it = resources_.find(Key{container, name});
    if (it == resources_.end()) {
      return errors::NotFound("resource '", name, "' not found in container '", container, "'");
    }
    return Cast<T>(it->second, name);
  }

  template <typename T>
  absl::StatusOr<std::shared_ptr<T>> LookupOrCreate(
      const std::string& container, const std::string& name,
      const std::function<std::shared_ptr<T>()>& create) {
    absl::MutexLock lock(&mu_);
    Key key{container, name};
    auto it = resources_.find(key);
    if (it != resources_.end()) return Cast<T>(it->second, name);
    std::shared_ptr<T> r = create();
    resources_[key] = Entry{std::type_index(typeid(T)), r};
    return r;
  }

  // NotFound if absent.
  absl::Status Delete(const std::string& container, const std::string& name);
  // Drops every resource in `container`.
  void Cleanup(const std::string& container);
  void Clear();

 private:
  using Key = std::pair<std::string, std::string>;
  struct Entry {
    std::type_index type = std::type_index(typeid(void));
    std::shared_ptr<ResourceBase> resource;
  };
  template <typename T>
  static absl::StatusOr<std::shared_ptr<T>> Cast(const Entry& e, const std::string& name) {
    if (e.type != std::type_index(typeid(T))) {
      return errors::InvalidArgument("resource '", name, "' is a ", e.resource->TypeName(),
                                     ", not the type requested");
    }
    return std::static_pointer_cast<T>(e.resource);
  }

  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, Entry> resources_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_RESOURCE_MGR_H_
