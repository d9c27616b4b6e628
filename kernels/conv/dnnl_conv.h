// One pass of a 2-D convolution through oneDNN (Debian's libdnnl, 2.6, on its
// OpenMP runtime), on float buffers in TensorFlow's layouts: activations NHWC
// or NCHW as `geometry.format` says, the filter [rows, cols, in/groups, out]
// (a depthwise filter [rows, cols, in, multiplier] is that same memory with
// groups = in).
//
//   TG_RETURN_IF_ERROR(RunDnnlConv(geometry, ConvPass::kForward, threads,
//                                  input, filter, output));
//
// Primitives are built once per geometry, pass and thread count (oneDNN
// fixes a primitive's threads when it builds it) and kept in a process-wide
// cache of kDnnlConvCacheCapacity entries (least recently used dropped).
// oneDNN is given the activations in place when it can run on the plain layout
// (NHWC); for NCHW, and for the filter always, it picks its own blocked layout
// and the pass reorders into and out of it (the filter is small; an NCHW
// activation costs one copy each way). Thread-safe: every call has its own
// scratchpad and runs on its thread's stream.
#ifndef TENSORGRID_KERNELS_CONV_DNNL_CONV_H_
#define TENSORGRID_KERNELS_CONV_DNNL_CONV_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "core/util/conv_geometry.h"
#include "kernels/conv/conv_kernels.h"

namespace tensorgrid {
namespace conv {

inline constexpr size_t kDnnlConvCacheCapacity = 128;

// Runs `pass` of `geometry` (every size known and positive) with at most
// `num_threads` OpenMP threads (set for the calling thread). The buffer the
// pass writes is overwritten. Internal if oneDNN fails.
absl::Status RunDnnlConv(const ConvGeometry& geometry, ConvPass pass, int num_threads, float* input,
                         float* filter, float* output);

// The implementation oneDNN chose for `pass` of `geometry` ("brgconv:avx512_core")
// with the calling thread's OpenMP thread count, for benchmarks and docs.
std::string DnnlConvImplementation(const ConvGeometry& geometry, ConvPass pass);

// How many primitives the cache holds now, and for the one it holds for
// `pass` of `geometry` on `num_threads` threads, the thread count it was
// built for (0: none cached) (tests).
size_t DnnlConvCacheSize();
int DnnlConvBuiltThreads(const ConvGeometry& geometry, ConvPass pass, int num_threads);

}  // namespace conv
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_CONV_DNNL_CONV_H_
