// ParallelSgemm's cuts (SplitSgemm) and its products on pools of 1-4
// threads against a double loop: both cuts, every transpose, uneven last
// blocks, and operands that are windows of wider matrices (lda, ldb, ldc
// larger than the product's sides).
#define EIGEN_USE_THREADS

#include "kernels/math/sgemm.h"

#include <vector>

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace math {
namespace {

TEST(SplitSgemmTest, SmallProductsStayWhole) {
  const SgemmSplit s = SplitSgemm(32, 10, 100, 8);  // 64 kFLOP
  EXPECT_EQ(s.blocks, 1);
  EXPECT_EQ(SplitSgemm(0, 0, 100, 8).blocks, 1);
}

TEST(SplitSgemmTest, CutsTheLongerSide) {
  // 128 x 500 x 784: 100 MFLOP, enough for every thread.
  SgemmSplit s = SplitSgemm(128, 500, 784, 4);
  EXPECT_FALSE(s.by_rows);
  EXPECT_EQ(s.block % 16, 0);
  EXPECT_EQ(s.blocks, 4);
  EXPECT_GE(s.block * s.blocks, 500);
  EXPECT_LT(s.block * (s.blocks - 1), 500);
  s = SplitSgemm(784, 500, 128, 3);  // a weight gradient: rows
  EXPECT_TRUE(s.by_rows);
  EXPECT_EQ(s.blocks, 3);
  EXPECT_GE(s.block * s.blocks, 784);
}

TEST(SplitSgemmTest, NoMoreBlocksThanTheWorkPays) {
  // 2 x 64 x 64 x 200 = 1.6 MFLOP: one block's worth.
  EXPECT_EQ(SplitSgemm(64, 64, 200, 8).blocks, 1);
  // 2 x 64 x 64 x 512 = 4.2 MFLOP: four.
  EXPECT_EQ(SplitSgemm(64, 64, 512, 8).blocks, 4);
  // A side shorter than 16 a thread is cut finer than 16.
  const SgemmSplit s = SplitSgemm(20, 6, 20000, 4);
  EXPECT_TRUE(s.by_rows);
  EXPECT_EQ(s.blocks, 4);
  EXPECT_EQ(s.block, 5);
}

TEST(SplitSgemmTest, RoundingTo16NeverCostsAThread) {
  // 784 rows on 8 threads: 98 each; 112 (7 x 16) would leave a thread idle.
  SgemmSplit s = SplitSgemm(784, 500, 128, 8);
  EXPECT_EQ(s.blocks, 8);
  EXPECT_EQ(s.block, 98);
  // 500 columns on 4 threads: 128 (8 x 16) still makes 4 blocks.
  s = SplitSgemm(128, 500, 784, 4);
  EXPECT_EQ(s.blocks, 4);
  EXPECT_EQ(s.block, 128);
}

// a [m, k] (or [k, m] transposed) inside a buffer of row stride lda, the
// same for b and c; the product against a double loop.
void ExpectProduct(int threads, bool ta, bool tb, int64_t m, int64_t n, int64_t k) {
  SCOPED_TRACE(testing::Message() << threads << " threads, " << m << "x" << k << " by " << k << "x"
                                  << n << (ta ? ", a transposed" : "")
                                  << (tb ? ", b transposed" : ""));
  const int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  const int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  const int64_t lda = a_cols + 3, ldb = b_cols + 5, ldc = n + 7;
  std::vector<float> a(a_rows * lda), b(b_rows * ldb), c(m * ldc, -1.0f);
  // Multiples of 1/8 small enough that every sum is exact in float.
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 17) * 0.25f - 2;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 13) * 0.5f - 3;
  Eigen::ThreadPool pool(threads);
  Eigen::ThreadPoolDevice device(&pool, threads);
  ASSERT_OK(ParallelSgemm(device, ta, tb, m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) {
        want +=
            double{ta ? a[p * lda + i] : a[i * lda + p]} * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      }
      ASSERT_EQ(c[i * ldc + j], static_cast<float>(want)) << "at " << i << ", " << j;
    }
    for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], -1.0f) << "outside c at " << i;
  }
}

TEST(ParallelSgemmTest, MatchesALoopForEveryCutAndTranspose) {
  for (int threads : {1, 2, 3, 4}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        ExpectProduct(threads, ta, tb, 70, 45, 400);   // rows, uneven
        ExpectProduct(threads, ta, tb, 45, 70, 400);   // columns, uneven
        ExpectProduct(threads, ta, tb, 70, 45, 1000);  // up to 4 blocks
        ExpectProduct(threads, ta, tb, 45, 70, 1000);
        ExpectProduct(threads, ta, tb, 7, 3, 60000);  // thin sides cut by 1
        ExpectProduct(threads, ta, tb, 5, 4, 3);      // too small to cut
      }
    }
  }
}

}  // namespace
}  // namespace math
}  // namespace tensorgrid
