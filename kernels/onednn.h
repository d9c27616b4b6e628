// What every oneDNN kernel shares: the process's CPU engine, each thread's
// stream, and buffers for what oneDNN itself needs during a call (a tensor
// reordered into the layout a primitive prefers, a scratchpad) taken from
// tensorgrid's tensor buffers. Link //kernels:onednn.
//
//   Tensor holder;
//   TG_ASSIGN_OR_RETURN(dnnl::memory scratchpad, OneDnnTempMemory(pd.scratchpad_desc(), &holder));
//
// Why not oneDNN's own allocation (dnnl::memory(desc, engine)): it mallocs
// and frees per call, and glibc maps every block above its mmap threshold
// (at most 32 MiB) afresh and unmaps it on free, so each call faults such
// buffers in again page by page. A depthwise NCHW convolution's 58 MB
// copies cost 134-315 ms of page faults per reorder that way on a 2-core VM
// (docs/PERFORMANCE.md, "Convolutions against PyTorch"). Tensor buffers of
// 256 KiB and up are kept for reuse (core/framework/tensor.cc), while the
// cache has room (an eighth of memory, 256 MiB to 4 GiB, by default;
// SetTensorBufferCacheBytes).
#ifndef TENSORGRID_KERNELS_ONEDNN_H_
#define TENSORGRID_KERNELS_ONEDNN_H_

#include "absl/status/statusor.h"
#include "core/framework/tensor.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace tensorgrid {

// The process's oneDNN CPU engine (one for every kernel, never destroyed).
const dnnl::engine& OneDnnCpuEngine();

// The calling thread's stream on that engine: a kernel runs its primitives
// on it and waits for them before it returns.
dnnl::stream& OneDnnStream();

// Memory of `desc`'s size and layout over a buffer `*holder` now owns (the
// memory is valid while `*holder` holds it); an empty memory for a desc of
// size 0. ResourceExhausted, naming the size, when it cannot be allocated.
absl::StatusOr<dnnl::memory> OneDnnTempMemory(const dnnl::memory::desc& desc, Tensor* holder);

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_ONEDNN_H_
