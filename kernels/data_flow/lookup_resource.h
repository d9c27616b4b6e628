// The resource a kernel's DT_RESOURCE handle input names, from the device's
// ResourceMgr (queues and accumulators; variables have their own lookup).
#ifndef TENSORGRID_KERNELS_DATA_FLOW_LOOKUP_RESOURCE_H_
#define TENSORGRID_KERNELS_DATA_FLOW_LOOKUP_RESOURCE_H_

#include <memory>
#include <string>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {

// InvalidArgument unless input `i` is a scalar resource handle; NotFound,
// naming `kind` and the resource, if nothing of that name exists (its
// creating op has not run on this device, or its container was reset).
template <typename T>
absl::StatusOr<std::shared_ptr<T>> LookupResource(const OpKernelContext& ctx, int i,
                                                  const std::string& kind) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DT_RESOURCE || t.dims() != 0) {
    return errors::InvalidArgument("input ", i, " must be a scalar resource handle, got ",
                                   t.DebugString());
  }
  const ResourceHandle& h = t.scalar<ResourceHandle>();
  auto r = ctx.resource_manager()->Lookup<T>(h.container, h.name);
  if (absl::IsNotFound(r.status())) {
    return errors::NotFound(kind, " '", h.name, "' (container '", h.container, "') does not exist on ",
                            ctx.device()->name(), "; run the op that creates it first");
  }
  return r;
}

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_DATA_FLOW_LOOKUP_RESOURCE_H_
