#include "kernels/onednn.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "core/platform/status.h"

namespace tensorgrid {

const dnnl::engine& OneDnnCpuEngine() {
  static const auto* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& OneDnnStream() {
  thread_local dnnl::stream stream(OneDnnCpuEngine());
  return stream;
}

absl::StatusOr<dnnl::memory> OneDnnTempMemory(const dnnl::memory::desc& desc, Tensor* holder) {
  const size_t bytes = desc.get_size();
  if (bytes == 0) return dnnl::memory();
  absl::StatusOr<Tensor> buffer =
      Tensor::Allocate(DT_UINT8, TensorShape({static_cast<int64_t>(bytes)}));
  if (!buffer.ok()) {
    return WithContext(buffer.status(), absl::StrCat("a ", bytes, "-byte oneDNN buffer"));
  }
  *holder = *std::move(buffer);
  return dnnl::memory(desc, OneDnnCpuEngine(), holder->raw_data());
}

}  // namespace tensorgrid
