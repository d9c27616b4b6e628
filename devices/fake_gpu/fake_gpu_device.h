// A fake GPU for tests on machines without one: a device of type "GPU"
// whose "device memory" is host memory marked as not host-readable
// (Tensor::OnHost() is false), copied in and out through a DeviceContext
// that counts its copies. Placement, memory types, partitioning, the
// executor's copies, Send/Recv and fetches all take the paths they take
// with a real GPU. Kernels for it: RegisterFakeGpuKernel runs an op's CPU
// kernel on the fake device memory (which really is host memory).
#ifndef TENSORGRID_DEVICES_FAKE_GPU_FAKE_GPU_DEVICE_H_
#define TENSORGRID_DEVICES_FAKE_GPU_FAKE_GPU_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "core/framework/device.h"

namespace tensorgrid {

struct FakeGpuCopies {
  std::atomic<int64_t> host_to_device{0};
  std::atomic<int64_t> device_to_host{0};
  std::atomic<int64_t> in_device{0};
};
// Copies made by every fake GPU since the last reset.
FakeGpuCopies& FakeGpuCopyCounts();
void ResetFakeGpuCopyCounts();

// A fake GPU named `name` whose memory holds at most `memory_limit` bytes.
std::unique_ptr<Device> NewFakeGpuDevice(const std::string& name,
                                         int64_t memory_limit = int64_t{1} << 30);

// Registers the "GPU" device factory with fake GPUs: `count` per task, or
// ConfigProto.device_count {"GPU": N}.
void RegisterFakeGpuFactory(int count);

// Registers `op`'s CPU kernels for device "GPU" too, with the arguments in
// `host_memory` kept in host memory.
void RegisterFakeGpuKernel(const std::string& op, std::initializer_list<const char*> host_memory);

}  // namespace tensorgrid

#endif  // TENSORGRID_DEVICES_FAKE_GPU_FAKE_GPU_DEVICE_H_
