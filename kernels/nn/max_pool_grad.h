// MaxPoolGrad's loops: each window's gradient goes to the first position of
// its maximum (row-major order within the window), found again from the
// input. One pass over the windows, where oneDNN needs a forward pass for
// its workspace and then a backward one (and has only a generic NCHW
// backward: 8x slower than PyTorch's here). NHWC: one example per task,
// channels in the vector lanes; NCHW: one (example, channel) plane per
// task, a row of windows in the lanes. No branch on the data: a select per
// lane keeps the first maximum.
#ifndef TENSORGRID_KERNELS_NN_MAX_POOL_GRAD_H_
#define TENSORGRID_KERNELS_NN_MAX_POOL_GRAD_H_

#include "core/framework/op_kernel.h"
#include "core/util/pool_geometry.h"

namespace tensorgrid {
namespace nn {

// output (g's input shape) = the gradient of MaxPool for `grad` (g's output shape).
void MaxPoolGrad(const OpKernelContext& ctx, const Pool2DGeometry& g, const float* input,
                 const float* grad, float* output);

}  // namespace nn
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_NN_MAX_POOL_GRAD_H_
