// The part every optimizer kernel shares: finding the variables it updates
// (var and its slots), checking them, locking them, and giving the update a
// buffer it may write in place.
//
//   const VariableArg args[] = {{0, "var"}, {1, "accum"}};
//   TG_RETURN_IF_ERROR(UpdateVariables(ctx, resource_, use_locking_, DataTypeToEnum<T>::value,
//   args,
//                                      [&](absl::Span<Tensor> vars) { ...; return absl::OkStatus();
//                                      }));
//
// Ref forms (ApplyMomentum) get each variable through a ref input; resource
// forms (ResourceApplyMomentum) through a handle, looked up in the device's
// ResourceMgr. Either way the variable must be initialized (FailedPrecondition
// naming it), hold the update's dtype and have the shape of the first one
// (InvalidArgument naming the input and both).
//
// Locking: with `use_locking` the variables' mutexes (Var::mu) are held, in
// address order so that two updates of overlapping variables cannot
// deadlock, from the checks until the update returns: concurrent updates are
// serialized and none is lost. Without it each variable is locked only while
// its buffer is prepared, and the arithmetic runs unlocked (TensorFlow's
// use_locking=false: less contention; concurrent updates may interleave or be
// lost, and a reader may see a half-done update).
//
// In place: a buffer that someone else still references (a reader's
// snapshot) is copied first, so a snapshot taken before the update never
// changes; otherwise the variable's own buffer is updated.
#ifndef TENSORGRID_KERNELS_TRAINING_VARIABLE_UPDATE_H_
#define TENSORGRID_KERNELS_TRAINING_VARIABLE_UPDATE_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/framework/op_kernel.h"

namespace tensorgrid {

// One variable input of an optimizer op: its index and its name in the op.
struct VariableArg {
  int input;
  const char* name;
};

// Runs `update` on the buffers of the variables at `args` (vars[i] for
// args[i]); see the file comment for the checks and the locking.
absl::Status UpdateVariables(OpKernelContext& ctx, bool resource, bool use_locking, DataType dtype,
                             absl::Span<const VariableArg> args,
                             const std::function<absl::Status(absl::Span<Tensor> vars)>& update);

// A copy of `t` with its own buffer in the same memory: DeepCopy on the
// host; in device memory, a copy queued through the memory's DeviceContext.
// Writers use it to stop sharing a buffer that a reader still holds.
absl::StatusOr<Tensor> CopyForWrite(const Tensor& t);

// InvalidArgument unless input `input` (named `name`) is a scalar.
absl::Status CheckScalarInput(const OpKernelContext& ctx, int input, const char* name);

// InvalidArgument unless input `input` (named `name`) has the variables' shape.
absl::Status CheckInputShape(const OpKernelContext& ctx, int input, const char* name,
                             const TensorShape& var_shape);

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_TRAINING_VARIABLE_UPDATE_H_
