#include "core/framework/device.h"

#include <random>

#define EIGEN_USE_THREADS
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {

uint64_t NewDeviceIncarnation() {
  std::random_device rd;
  uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(NowNanos());
  return v == 0 ? 1 : v;
}

namespace {

class CpuDevice final : public Device {
 public:
  CpuDevice(const std::string& name, int threads)
      : Device(name, DEVICE_CPU, NewDeviceIncarnation()),
        pool_(threads),
        eigen_device_(pool_.AsEigenThreadPool(), pool_.NumThreads()) {}
  const Eigen::ThreadPoolDevice& eigen_cpu_device() const override { return eigen_device_; }

 private:
  ThreadPool pool_;
  Eigen::ThreadPoolDevice eigen_device_;
};

}  // namespace

std::unique_ptr<Device> NewCpuDevice(const std::string& name, int intra_op_threads) {
  int threads = intra_op_threads > 0 ? intra_op_threads : NumSchedulableCPUs();
  return std::make_unique<CpuDevice>(name, threads);
}

}  // namespace tensorgrid
