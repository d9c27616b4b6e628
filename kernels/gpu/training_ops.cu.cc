// The optimizer update kernels of training_ops.cu.h: one grid-stride loop
// each, computing the CPU kernels' expressions element by element.
#include "kernels/gpu/training_ops.cu.h"

#include <cstdint>

#include "kernels/gpu/cwise_ops.cu.h"

namespace tensorgrid {
namespace gpu {
namespace {

constexpr int kThreads = 256;

#define TG_GRID_STRIDE_(i, n)                                                            \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

template <typename T>
__global__ void GradientDescentKernel(T* var, const T* alpha, const T* delta, int64_t n) {
  const T a = *alpha;
  TG_GRID_STRIDE_(i, n) { var[i] -= delta[i] * a; }
}

template <typename T>
__global__ void MomentumKernel(T* var, T* accum, const T* lr_p, const T* grad, const T* momentum_p,
                               bool use_nesterov, int64_t n) {
  const T lr = *lr_p, momentum = *momentum_p;
  TG_GRID_STRIDE_(i, n) {
    const T a = accum[i] * momentum + grad[i];
    accum[i] = a;
    var[i] -= use_nesterov ? grad[i] * lr + a * momentum * lr : a * lr;
  }
}

template <typename T>
__global__ void AdagradKernel(T* var, T* accum, const T* lr_p, const T* grad, bool update_slots,
                              int64_t n) {
  const T lr = *lr_p;
  TG_GRID_STRIDE_(i, n) {
    const T g = grad[i];
    if (update_slots) accum[i] += g * g;
    var[i] -= g * lr * (T(1) / sqrt(accum[i]));
  }
}

template <typename T>
__global__ void AdamKernel(T* var, T* m, T* v, const T* beta1_power_p, const T* beta2_power_p,
                           const T* lr_p, const T* beta1_p, const T* beta2_p, const T* epsilon_p,
                           const T* grad, bool use_nesterov, int64_t n) {
  const T beta1 = *beta1_p, beta2 = *beta2_p, epsilon = *epsilon_p;
  const T alpha = *lr_p * sqrt(T(1) - *beta2_power_p) / (T(1) - *beta1_power_p);
  TG_GRID_STRIDE_(i, n) {
    const T g = grad[i];
    const T mi = m[i] + (g - m[i]) * (T(1) - beta1);
    const T vi = v[i] + (g * g - v[i]) * (T(1) - beta2);
    m[i] = mi;
    v[i] = vi;
    const T step = use_nesterov ? (g * (T(1) - beta1) + mi * beta1) * alpha : mi * alpha;
    var[i] -= step / (sqrt(vi) + epsilon);
  }
}

template <typename T>
__global__ void AssignUpdateKernel(T* var, const T* value, bool add, int64_t n) {
  TG_GRID_STRIDE_(i, n) { var[i] = add ? var[i] + value[i] : var[i] - value[i]; }
}

#undef TG_GRID_STRIDE_

}  // namespace

template <typename T>
cudaError_t LaunchApplyGradientDescent(T* var, const T* alpha, const T* delta, int64_t n, int sms,
                                       cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  GradientDescentKernel<T><<<BlocksFor(n, sms), kThreads, 0, stream>>>(var, alpha, delta, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchApplyMomentum(T* var, T* accum, const T* lr, const T* grad, const T* momentum,
                                bool use_nesterov, int64_t n, int sms, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  MomentumKernel<T>
      <<<BlocksFor(n, sms), kThreads, 0, stream>>>(var, accum, lr, grad, momentum, use_nesterov, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchApplyAdagrad(T* var, T* accum, const T* lr, const T* grad, bool update_slots,
                               int64_t n, int sms, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  AdagradKernel<T>
      <<<BlocksFor(n, sms), kThreads, 0, stream>>>(var, accum, lr, grad, update_slots, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchApplyAdam(T* var, T* m, T* v, const T* beta1_power, const T* beta2_power,
                            const T* lr, const T* beta1, const T* beta2, const T* epsilon,
                            const T* grad, bool use_nesterov, int64_t n, int sms,
                            cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  AdamKernel<T><<<BlocksFor(n, sms), kThreads, 0, stream>>>(
      var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, use_nesterov, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchAssignUpdate(T* var, const T* value, bool add, int64_t n, int sms,
                               cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  AssignUpdateKernel<T><<<BlocksFor(n, sms), kThreads, 0, stream>>>(var, value, add, n);
  return cudaGetLastError();
}

#define TG_INSTANTIATE_APPLY_(T)                                                                   \
  template cudaError_t LaunchApplyGradientDescent<T>(T*, const T*, const T*, int64_t, int,         \
                                                     cudaStream_t);                                \
  template cudaError_t LaunchApplyMomentum<T>(T*, T*, const T*, const T*, const T*, bool, int64_t, \
                                              int, cudaStream_t);                                  \
  template cudaError_t LaunchApplyAdagrad<T>(T*, T*, const T*, const T*, bool, int64_t, int,       \
                                             cudaStream_t);                                        \
  template cudaError_t LaunchApplyAdam<T>(T*, T*, T*, const T*, const T*, const T*, const T*,      \
                                          const T*, const T*, const T*, bool, int64_t, int,        \
                                          cudaStream_t);
TG_INSTANTIATE_APPLY_(float)
TG_INSTANTIATE_APPLY_(double)

template cudaError_t LaunchAssignUpdate<float>(float*, const float*, bool, int64_t, int,
                                               cudaStream_t);
template cudaError_t LaunchAssignUpdate<double>(double*, const double*, bool, int64_t, int,
                                                cudaStream_t);
template cudaError_t LaunchAssignUpdate<int32_t>(int32_t*, const int32_t*, bool, int64_t, int,
                                                 cudaStream_t);
template cudaError_t LaunchAssignUpdate<int64_t>(int64_t*, const int64_t*, bool, int64_t, int,
                                                 cudaStream_t);

}  // namespace gpu
}  // namespace tensorgrid
