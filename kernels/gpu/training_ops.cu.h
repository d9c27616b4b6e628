// CUDA kernels of the optimizer updates (training_ops_gpu.cc) and of
// AssignAdd/AssignSub (variable_ops_gpu.cc): in place on the variable's
// buffer, n elements. Scalars (lr, momentum, beta1_power, ...) are device
// pointers, read by the kernel: TensorFlow keeps them in device memory too.
// T: float, double. Update rules: kernels/training/training_ops.cc.
#ifndef TENSORGRID_KERNELS_GPU_TRAINING_OPS_CU_H_
#define TENSORGRID_KERNELS_GPU_TRAINING_OPS_CU_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace tensorgrid {
namespace gpu {

template <typename T>
cudaError_t LaunchApplyGradientDescent(T* var, const T* alpha, const T* delta, int64_t n, int sms,
                                       cudaStream_t stream);

template <typename T>
cudaError_t LaunchApplyMomentum(T* var, T* accum, const T* lr, const T* grad, const T* momentum,
                                bool use_nesterov, int64_t n, int sms, cudaStream_t stream);

template <typename T>
cudaError_t LaunchApplyAdagrad(T* var, T* accum, const T* lr, const T* grad, bool update_slots,
                               int64_t n, int sms, cudaStream_t stream);

template <typename T>
cudaError_t LaunchApplyAdam(T* var, T* m, T* v, const T* beta1_power, const T* beta2_power,
                            const T* lr, const T* beta1, const T* beta2, const T* epsilon,
                            const T* grad, bool use_nesterov, int64_t n, int sms,
                            cudaStream_t stream);

// var += value (kAdd) or var -= value. T: float, double, int32_t, int64_t.
template <typename T>
cudaError_t LaunchAssignUpdate(T* var, const T* value, bool add, int64_t n, int sms,
                               cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_GPU_TRAINING_OPS_CU_H_
