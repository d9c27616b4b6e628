// DeviceContext: copies between host memory and one device's memory, in
// order with the work queued on that device. A GPU device's context copies
// on its streams; the fake GPU (tests) copies with memcpy. Tensors passed in
// stay referenced until the copy that reads them has finished.
//
// Each call returns once the copy is ordered before any later work on the
// device (host→device, in-device) or has completed (device→host, whose
// result the host reads next). Errors (a failed copy, an earlier
// asynchronous device error) come back as a Status.
#ifndef TENSORGRID_CORE_FRAMEWORK_DEVICE_CONTEXT_H_
#define TENSORGRID_CORE_FRAMEWORK_DEVICE_CONTEXT_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/framework/allocator.h"
#include "core/framework/tensor.h"

namespace tensorgrid {

class DeviceContext {
 public:
  virtual ~DeviceContext() = default;
  // `dst` is already allocated (device memory for the first and third, host
  // memory for the second) with `src`'s dtype and shape.
  virtual absl::Status CopyCPUTensorToDevice(const Tensor& src, Tensor* dst) = 0;
  virtual absl::Status CopyDeviceTensorToCPU(const Tensor& src, Tensor* dst) = 0;
  virtual absl::Status CopyTensorInSameDevice(const Tensor& src, Tensor* dst) = 0;
  // Waits for everything queued on the device so far; the first error.
  virtual absl::Status Sync() = 0;
};

// `t` in the memory `type` of a device whose device memory comes from
// `device_allocator` (null: a host-only device, where both types are host
// memory). Returns `t` itself when it is already there, else a copy made
// through the DeviceContext of the memory it is in or goes to.
absl::StatusOr<Tensor> EnsureMemory(const Tensor& t, MemoryType type, Allocator* device_allocator);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_DEVICE_CONTEXT_H_
