// ResourceHandle: the element type of DT_RESOURCE tensors. It names a
// resource (a variable, a queue, ...) in some device's ResourceMgr.
#ifndef TENSORGRID_CORE_FRAMEWORK_RESOURCE_HANDLE_H_
#define TENSORGRID_CORE_FRAMEWORK_RESOURCE_HANDLE_H_

#include <string>

#include "absl/strings/str_cat.h"

namespace tensorgrid {

struct ResourceHandle {
  std::string device;     // device that owns the resource
  std::string container;  // ResourceMgr container ("" = the default one)
  std::string name;       // name within the container
  std::string type_name;  // e.g. "Var"

  std::string DebugString() const {
    return absl::StrCat(type_name, " '", name, "' in container '", container, "' on ", device);
  }
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_RESOURCE_HANDLE_H_
