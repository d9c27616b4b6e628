// GpuDevice: one CUDA GPU as a tensorgrid device ("/device:GPU:k").
//
//  - memory: a stream-ordered pool (cudaMallocAsync on the compute stream)
//    with a byte limit (gpu_options.per_process_gpu_memory_fraction) and
//    statistics; pinned host memory (cudaHostAlloc, cached) for HOST_MEMORY
//    outputs and staging;
//  - one compute stream: every kernel, copy and free of the device is queued
//    on it, so stream order is program order and a buffer freed with
//    cudaFreeAsync is never reused under a kernel still reading it;
//  - a DeviceContext copying host↔device on that stream;
//  - Sync(): a step ends when its queued work has, and a CUDA error raised
//    by it comes back as that step's Internal error.
//
// Kernels reach it with GpuDevice::From(ctx) (they are registered for
// DEVICE_GPU only, so the device is always a GpuDevice).
#ifndef TENSORGRID_DEVICES_GPU_GPU_DEVICE_H_
#define TENSORGRID_DEVICES_GPU_GPU_DEVICE_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "core/framework/device.h"
#include "core/framework/op_kernel.h"

namespace tensorgrid {

// Internal "CUDA error cudaErrorX (text)" + context, or OK.
absl::Status CudaStatus(cudaError_t err, absl::string_view what);
absl::Status CublasStatus(cublasStatus_t err, absl::string_view what);

class GpuDevice : public Device {
 public:
  static GpuDevice* From(OpKernelContext& ctx) { return static_cast<GpuDevice*>(ctx.device()); }
  static GpuDevice* From(OpKernelConstruction& ctx) {
    return static_cast<GpuDevice*>(ctx.device());
  }

  int cuda_ordinal() const { return ordinal_; }
  cudaStream_t stream() const { return stream_; }
  // A cuBLAS handle bound to stream(); fp32 math unless TF32 was allowed
  // (TG_GPU_ALLOW_TF32=1).
  cublasHandle_t cublas() const { return cublas_; }
  int multiprocessors() const { return multiprocessors_; }
  // Pinned host memory (cached): staging for copies, and sources that the
  // DMA engine reads at full speed.
  virtual Allocator* pinned_allocator() = 0;
  // After a kernel launch: its launch error, if any.
  static absl::Status LaunchStatus(absl::string_view kernel);

 protected:
  GpuDevice(const std::string& name, uint64_t incarnation, int ordinal)
      : Device(name, DEVICE_GPU, incarnation), ordinal_(ordinal) {}
  int ordinal_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  int multiprocessors_ = 1;
};

// Whether float MatMuls and convolutions may use TF32 tensor cores
// (TG_GPU_ALLOW_TF32=1; off by default, so results match the CPU's fp32).
bool GpuTf32Allowed();

// The number of GPUs CUDA sees (0 with no driver or no GPU).
int VisibleGpuCount();

}  // namespace tensorgrid

#endif  // TENSORGRID_DEVICES_GPU_GPU_DEVICE_H_
