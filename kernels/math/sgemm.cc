#define EIGEN_USE_THREADS

#include "kernels/math/sgemm.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>

#include "core/platform/status.h"
#include "kernels/openmp.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace math {

SgemmSplit SplitSgemm(int64_t m, int64_t n, int64_t k, int threads) {
  SgemmSplit split;
  // Cut the longer side of the output, in multiples of 16 (a cache line of
  // floats, one AVX-512 register) where that costs no thread.
  split.by_rows = m > n;
  const int64_t side = split.by_rows ? m : n;
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * k;
  const int64_t wanted =
      std::min<int64_t>(std::max(threads, 1),
                        std::max<int64_t>(1, static_cast<int64_t>(flops / kSgemmFlopsPerBlock)));
  // Blocks of whole 16s where that still makes `wanted` of them, else of
  // ceil(side / wanted).
  if (side == 0) return split;  // nothing to compute: one empty block
  split.block = (side + wanted - 1) / wanted;
  const int64_t rounded = (split.block + 15) / 16 * 16;
  if ((side + rounded - 1) / rounded == wanted) split.block = rounded;
  split.blocks = (side + split.block - 1) / split.block;
  return split;
}

absl::Status ParallelSgemm(const Eigen::ThreadPoolDevice& device, bool transpose_a,
                           bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
                           int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  const SgemmSplit split = SplitSgemm(m, n, k, device.numThreads());
  const char ta = transpose_a ? 'T' : 'N', tb = transpose_b ? 'T' : 'N';
  std::atomic<int> failed{dnnl_success};
  // Block i: rows (or columns) [i * block, min((i + 1) * block, side)) of c.
  const auto run = [&](Eigen::Index first, Eigen::Index last) {
    SetOpenMpThreads(1);  // this thread's oneDNN calls stay on it
    for (Eigen::Index i = first; i < last; ++i) {
      const int64_t lo = i * split.block;
      const int64_t hi = std::min((i + 1) * split.block, split.by_rows ? m : n);
      if (lo >= hi) continue;
      dnnl_status_t status;
      if (split.by_rows) {  // rows lo..hi of op(a): of a, or its columns
        status = dnnl_sgemm(ta, tb, hi - lo, n, k, 1.0f, transpose_a ? a + lo : a + lo * lda, lda,
                            b, ldb, 0.0f, c + lo * ldc, ldc);
      } else {  // columns lo..hi of op(b): of b, or its rows
        status = dnnl_sgemm(ta, tb, m, hi - lo, k, 1.0f, a, lda,
                            transpose_b ? b + lo * ldb : b + lo, ldb, 0.0f, c + lo, ldc);
      }
      if (status != dnnl_success) failed.store(status);
    }
  };
  if (split.blocks == 1) {
    run(0, 1);
  } else {
    // Each block is worth a thread of its own (kSgemmFlopsPerBlock).
    device.parallelFor(split.blocks, Eigen::TensorOpCost(0, 0, kSgemmFlopsPerBlock), run);
  }
  if (failed.load() != dnnl_success) {
    return errors::Internal("oneDNN's sgemm failed with status ", failed.load(), " on a ", m, "x",
                            k, " by ", k, "x", n, " product");
  }
  return absl::OkStatus();
}

}  // namespace math
}  // namespace tensorgrid
