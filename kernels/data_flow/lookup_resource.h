// The inputs of the data-flow kernels: the resource a DT_RESOURCE handle
// input names, from the device's ResourceMgr (queues, accumulators, gates;
// variables have their own lookup), and scalar inputs.
#ifndef TENSORGRID_KERNELS_DATA_FLOW_LOOKUP_RESOURCE_H_
#define TENSORGRID_KERNELS_DATA_FLOW_LOOKUP_RESOURCE_H_

#include <memory>
#include <string>

#include "core/framework/op_kernel.h"
#include "core/framework/types.h"
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
    return errors::NotFound(kind, " '", h.name, "' (container '", h.container,
                            "') does not exist on ", ctx.device()->name(),
                            "; run the op that creates it first");
  }
  return r;
}

// The value of scalar input `i` of type T; InvalidArgument naming it as
// `what` otherwise.
template <typename T>
absl::StatusOr<T> ScalarInput(const OpKernelContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DataTypeToEnum<T>::value || t.dims() != 0) {
    return errors::InvalidArgument(what, " must be a ", DataTypeString(DataTypeToEnum<T>::value),
                                   " scalar, got ", t.DebugString());
  }
  return t.scalar<T>();
}

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_DATA_FLOW_LOOKUP_RESOURCE_H_
