// Fashion-MNIST (and MNIST, which uses the same files) as training-ready
// tensors. Debian ships Fashion-MNIST in the dataset-fashion-mnist package,
// installed by scripts/setup.sh, under kFashionMnistDir:
//
//   TG_ASSIGN_OR_RETURN(MnistData train, LoadFashionMnist(kFashionMnistDir, MnistSplit::kTrain));
//   // train.images: float [60000, 784] in [0, 1]; train.labels: int64 [60000] in [0, 9]
//
// A directory holds train-images-idx3-ubyte, train-labels-idx1-ubyte,
// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each plain or with a
// ".gz" suffix. Labels are int64, the default `Tlabels` of
// SparseSoftmaxCrossEntropyWithLogits.
//
// Errors: NotFound naming the missing file (and, for the default directory,
// the package to install); DataLoss or InvalidArgument from ReadIdx; DataLoss
// when images and labels disagree (counts, rank, dtype, a label over 9).
#ifndef TENSORGRID_CLIENT_DATA_FASHION_MNIST_H_
#define TENSORGRID_CLIENT_DATA_FASHION_MNIST_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/framework/tensor.h"

namespace tensorgrid {

// Where Debian's dataset-fashion-mnist package puts the files.
inline constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";
inline constexpr char kFashionMnistPackage[] = "dataset-fashion-mnist";

enum class MnistSplit { kTrain, kTest };  // 60000 and 10000 examples

struct MnistData {
  Tensor images;  // float [N, 784], pixels scaled to [0, 1]
  Tensor labels;  // int64 [N], class ids 0..9
};

absl::StatusOr<MnistData> LoadFashionMnist(const std::string& dir = kFashionMnistDir,
                                           MnistSplit split = MnistSplit::kTrain);

// The path of a split's image or label file in `dir`: the plain name if that
// file exists, else the ".gz" name if that exists; NotFound naming both
// otherwise.
absl::StatusOr<std::string> FindMnistFile(const std::string& dir, MnistSplit split, bool labels);

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_DATA_FASHION_MNIST_H_
