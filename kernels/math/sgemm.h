// Row-major float products through oneDNN's sgemm on an Eigen thread pool:
//
//   c[m, n] = op(a) x op(b)      (op transposes when asked; lda, ldb, ldc
//                                 are the row strides of a, b and c)
//
// The output is cut into blocks of rows or of columns, and each block is one
// single-threaded dnnl_sgemm on one of the pool's threads (the caller's
// included). oneDNN's own threading is an OpenMP team whose threads spin at
// every barrier: beside the executor's pool on a shared machine it lost up
// to 10x against Eigen's contraction (docs/PERFORMANCE.md), so MatMul kept
// Eigen's contraction on more than one thread, at well under oneDNN's speed
// per thread. This keeps oneDNN's kernel and the pool's sleeping threads.
#ifndef TENSORGRID_KERNELS_MATH_SGEMM_H_
#define TENSORGRID_KERNELS_MATH_SGEMM_H_

#include <cstdint>

#include "absl/status/status.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace tensorgrid {
namespace math {

// Products of fewer floating-point operations than this stay on the calling
// thread, and no block gets fewer: a block of 1 MFLOP is about 10 µs of one
// core, against a few µs to hand it to another thread.
inline constexpr double kSgemmFlopsPerBlock = 1 << 20;

// How the product is cut: `blocks` blocks of `block` rows (by_rows) or
// columns each, the last one shorter; `block` a multiple of 16 where that
// still gives one block a thread. Exposed for tests.
struct SgemmSplit {
  bool by_rows = false;
  int64_t blocks = 1;
  int64_t block = 0;
};
SgemmSplit SplitSgemm(int64_t m, int64_t n, int64_t k, int threads);

// c = op(a) x op(b) on `device`'s threads. Internal naming oneDNN's status
// when a block's sgemm fails.
absl::Status ParallelSgemm(const Eigen::ThreadPoolDevice& device, bool transpose_a,
                           bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
                           int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

}  // namespace math
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_MATH_SGEMM_H_
