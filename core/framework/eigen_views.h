// Typed Eigen views of a Tensor's buffer, for kernels:
//   auto in = EigenFlat<float>(x);           // rank-1 view of all elements
//   auto m  = EigenMatrix<float>(a);         // rank-2 (CHECKs rank)
//   auto t  = EigenShaped<float, 3>(x, {a, b, c});
// Kept out of tensor.h so that code which never touches Eigen compiles fast.
#ifndef TENSORGRID_CORE_FRAMEWORK_EIGEN_VIEWS_H_
#define TENSORGRID_CORE_FRAMEWORK_EIGEN_VIEWS_H_

#include <array>

#include "core/framework/tensor.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {

template <typename T, int N>
using EigenTensorMap = Eigen::TensorMap<Eigen::Tensor<T, N, Eigen::RowMajor, Eigen::DenseIndex>>;

template <typename T>
EigenTensorMap<T, 1> EigenFlat(const Tensor& t) {
  return EigenTensorMap<T, 1>(t.data<T>(), t.NumElements());
}

template <typename T>
EigenTensorMap<T, 0> EigenScalar(const Tensor& t) {
  return EigenTensorMap<T, 0>(t.data<T>());
}

template <typename T, int N>
EigenTensorMap<T, N> EigenShaped(const Tensor& t, const std::array<Eigen::DenseIndex, N>& dims) {
  return EigenTensorMap<T, N>(t.data<T>(), dims);
}

// Views `t` as rank N; t.dims() must equal N.
template <typename T, int N>
EigenTensorMap<T, N> EigenTensor(const Tensor& t) {
  TG_CHECK(t.dims() == N);
  std::array<Eigen::DenseIndex, N> dims;
  for (int i = 0; i < N; ++i) dims[i] = t.dim_size(i);
  return EigenTensorMap<T, N>(t.data<T>(), dims);
}

template <typename T>
EigenTensorMap<T, 2> EigenMatrix(const Tensor& t) {
  return EigenTensor<T, 2>(t);
}

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_EIGEN_VIEWS_H_
