#define EIGEN_USE_THREADS

#include "kernels/nn/onednn.h"

#include <algorithm>

#include "core/platform/status.h"
#include "kernels/onednn.h"
#include "kernels/openmp.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace nn {

dnnl::memory::desc ImageDesc(const std::array<int64_t, 4>& nchw, DataFormat format) {
  return dnnl::memory::desc({nchw[0], nchw[1], nchw[2], nchw[3]}, dnnl::memory::data_type::f32,
                            format == DataFormat::kNHWC ? dnnl::memory::format_tag::nhwc
                                                        : dnnl::memory::format_tag::nchw);
}

dnnl::memory::desc VectorDesc(int64_t n) {
  return dnnl::memory::desc({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
}

dnnl::memory Memory(const dnnl::memory::desc& desc, const void* data) {
  return dnnl::memory(desc, OneDnnCpuEngine(), const_cast<void*>(data));
}

int UseIntraOpThreads(const OpKernelContext& ctx) {
  // OpenMP keeps the thread count per calling thread: set it for this one
  // (an executor thread) to the session's intra-op parallelism.
  const int threads = std::max(1, ctx.eigen_cpu_device().numThreads());
  if (OpenMpThreads() != threads) SetOpenMpThreads(threads);
  return threads;
}

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

absl::Status Execute(const OpKernelContext& ctx, const dnnl::primitive& primitive,
                     const std::unordered_map<int, dnnl::memory>& args) {
  UseIntraOpThreads(ctx);
  const dnnl_memory_desc_t* scratch_md =
      dnnl_primitive_desc_query_md(primitive.get_primitive_desc(), dnnl_query_scratchpad_md, 0);
  Tensor holder;  // the scratchpad's buffer, until the primitive has finished
  if (scratch_md != nullptr && dnnl_memory_desc_get_size(scratch_md) > 0) {
    std::unordered_map<int, dnnl::memory> with_scratchpad = args;
    TG_ASSIGN_OR_RETURN(with_scratchpad[DNNL_ARG_SCRATCHPAD],
                        OneDnnTempMemory(dnnl::memory::desc(*scratch_md), &holder));
    primitive.execute(OneDnnStream(), with_scratchpad);
  } else {
    primitive.execute(OneDnnStream(), args);
  }
  OneDnnStream().wait();
  return absl::OkStatus();
}

absl::Status Guard(const char* what, const std::function<absl::Status()>& fn) {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    return errors::Internal("oneDNN ", what, ": ", e.what(), " (status ",
                            static_cast<int>(e.status), ")");
  }
}

}  // namespace nn
}  // namespace tensorgrid
