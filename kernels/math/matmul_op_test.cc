#include <array>

#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class MatMulTest : public OpsTestBase {
 protected:
  template <typename T>
  absl::Status Run(Tensor a, Tensor b, bool transpose_a = false, bool transpose_b = false) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("m", "MatMul")
                                  .Attr("T", DataTypeToEnum<T>::value)
                                  .Attr("transpose_a", transpose_a)
                                  .Attr("transpose_b", transpose_b)));
    AddInput(std::move(a));
    AddInput(std::move(b));
    return RunOp();
  }
};

// [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]].
TEST_F(MatMulTest, Plain) {
  ASSERT_OK(Run<float>(Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}),
                       Tensor::FromVector<float>({7, 8, 9, 10, 11, 12}, {3, 2})));
  ExpectTensorEqual<float>(GetOutput(0), {58, 64, 139, 154}, {2, 2});
}

TEST_F(MatMulTest, TransposeA) {
  ASSERT_OK(Run<double>(Tensor::FromVector<double>({1, 4, 2, 5, 3, 6}, {3, 2}),
                        Tensor::FromVector<double>({7, 8, 9, 10, 11, 12}, {3, 2}), true, false));
  ExpectTensorEqual<double>(GetOutput(0), {58, 64, 139, 154}, {2, 2});
}

TEST_F(MatMulTest, TransposeB) {
  ASSERT_OK(Run<int32_t>(Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}),
                         Tensor::FromVector<int32_t>({7, 9, 11, 8, 10, 12}, {2, 3}), false, true));
  ExpectTensorEqual<int32_t>(GetOutput(0), {58, 64, 139, 154}, {2, 2});
}

TEST_F(MatMulTest, TransposeBoth) {
  ASSERT_OK(Run<int64_t>(Tensor::FromVector<int64_t>({1, 4, 2, 5, 3, 6}, {3, 2}),
                         Tensor::FromVector<int64_t>({7, 9, 11, 8, 10, 12}, {2, 3}), true, true));
  ExpectTensorEqual<int64_t>(GetOutput(0), {58, 64, 139, 154}, {2, 2});
}

TEST_F(MatMulTest, VectorTimesMatrix) {
  ASSERT_OK(Run<float>(Tensor::FromVector<float>({1, 1, 1}, {1, 3}),
                       Tensor::FromVector<float>({7, 8, 9, 10, 11, 12}, {3, 2})));
  ExpectTensorEqual<float>(GetOutput(0), {27, 30}, {1, 2});
}

TEST_F(MatMulTest, LargeProductMatchesNaiveLoop) {
  const int m = 150, k = 200, n = 120;
  Tensor a(DT_DOUBLE, {k, m});  // used transposed
  Tensor b(DT_DOUBLE, {k, n});
  for (int i = 0; i < k * m; ++i) a.data<double>()[i] = (i % 17) - 8;
  for (int i = 0; i < k * n; ++i) b.data<double>()[i] = (i % 13) * 0.5;
  std::vector<double> want(m * n, 0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p)
        want[i * n + j] += a.data<double>()[p * m + i] * b.data<double>()[p * n + j];
  ASSERT_OK(Run<double>(a, b, true, false));
  ExpectTensorNear<double>(GetOutput(0), want, {m, n}, 1e-9);
}

// float runs oneDNN's sgemm, on two threads in blocks of rows or columns
// (sgemm.h) once the product is big enough: against a double loop, every
// transpose, a product too small to cut and two cut unevenly.
TEST_F(MatMulTest, FloatOnOneAndTwoThreadsMatchesNaiveLoop) {
  for (const auto [m, k, n] : {std::array<int, 3>{37, 65, 29}, std::array<int, 3>{70, 400, 45},
                               std::array<int, 3>{45, 400, 70}})
    for (int threads : {1, 2}) {
      device_ = NewCpuDevice("/job:localhost/replica:0/task:0/device:CPU:0", threads);
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          Tensor a(DT_FLOAT, ta ? TensorShape({k, m}) : TensorShape({m, k}));
          Tensor b(DT_FLOAT, tb ? TensorShape({n, k}) : TensorShape({k, n}));
          for (int i = 0; i < m * k; ++i)
            a.data<float>()[i] = static_cast<float>(i % 17) * 0.25f - 2;
          for (int i = 0; i < k * n; ++i)
            b.data<float>()[i] = static_cast<float>(i % 13) * 0.5f - 3;
          std::vector<float> want(m * n, 0);
          for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
              double sum = 0;
              for (int p = 0; p < k; ++p) {
                sum += double{a.data<float>()[ta ? p * m + i : i * k + p]} *
                       b.data<float>()[tb ? j * k + p : p * n + j];
              }
              want[i * n + j] = static_cast<float>(sum);
            }
          inputs_.clear();
          ASSERT_OK(Run<float>(a, b, ta, tb));
          ExpectTensorNear<float>(GetOutput(0), want, {m, n}, 1e-3);
        }
      }
    }
}

TEST_F(MatMulTest, EmptyInnerDimensionGivesZeros) {
  ASSERT_OK(Run<float>(Tensor(DT_FLOAT, {2, 0}), Tensor(DT_FLOAT, {0, 3})));
  ExpectTensorEqual<float>(GetOutput(0), {0, 0, 0, 0, 0, 0}, {2, 3});
}

TEST_F(MatMulTest, EmptyOutput) {
  ASSERT_OK(Run<float>(Tensor(DT_FLOAT, {0, 4}), Tensor(DT_FLOAT, {4, 3})));
  ExpectTensorEqual<float>(GetOutput(0), {}, {0, 3});
}

TEST_F(MatMulTest, InnerDimensionsMustAgree) {
  EXPECT_STATUS(Run<float>(Tensor(DT_FLOAT, {2, 3}), Tensor(DT_FLOAT, {4, 5})), kInvalidArgument,
                "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]");
  inputs_.clear();
  // Transposing b makes [2,3] x [3,4]^T a mismatch.
  EXPECT_STATUS(Run<float>(Tensor(DT_FLOAT, {2, 3}), Tensor(DT_FLOAT, {3, 4}), false, true),
                kInvalidArgument,
                "In[0]: [2,3], In[1]: [3,4] (transpose_a=false, transpose_b=true)");
}

TEST_F(MatMulTest, InputsMustBeMatrices) {
  EXPECT_STATUS(Run<float>(Tensor(DT_FLOAT, {2, 3, 4}), Tensor(DT_FLOAT, {4, 5})), kInvalidArgument,
                "In[0] is not a matrix. Instead it has shape [2,3,4]");
  inputs_.clear();
  EXPECT_STATUS(Run<float>(Tensor(DT_FLOAT, {2, 3}), Tensor(DT_FLOAT, {3})), kInvalidArgument,
                "In[1] is not a matrix");
}

}  // namespace
}  // namespace tensorgrid
