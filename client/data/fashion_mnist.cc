#include "client/data/fashion_mnist.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "client/data/idx.h"
#include "core/framework/eigen_views.h"
#include "core/platform/file.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

constexpr int kNumClasses = 10;

// uint8 [N, ...] -> float [N, prod(...)] / 255.
absl::StatusOr<Tensor> ScaleImages(const Tensor& raw, const std::string& path) {
  if (raw.dtype() != DT_UINT8 || raw.dims() < 2) {
    return absl::DataLossError(absl::StrCat(path, ": expected uint8 images [N, rows, cols], found ",
                                            DataTypeString(raw.dtype()), " ",
                                            raw.shape().DebugString()));
  }
  const int64_t n = raw.dim_size(0);
  const int64_t pixels = n == 0 ? 0 : raw.NumElements() / n;
  TG_ASSIGN_OR_RETURN(Tensor images, Tensor::Allocate(DT_FLOAT, TensorShape({n, pixels})));
  EigenFlat<float>(images) = EigenFlat<uint8_t>(raw).cast<float>() / 255.0f;
  return images;
}

// uint8 [N] -> int64 [N], each checked to be a class id.
absl::StatusOr<Tensor> WidenLabels(const Tensor& raw, const std::string& path) {
  if (raw.dtype() != DT_UINT8 || raw.dims() != 1) {
    return absl::DataLossError(absl::StrCat(path, ": expected uint8 labels [N], found ",
                                            DataTypeString(raw.dtype()), " ",
                                            raw.shape().DebugString()));
  }
  TG_ASSIGN_OR_RETURN(Tensor labels, Tensor::Allocate(DT_INT64, raw.shape()));
  const uint8_t* in = raw.data<uint8_t>();
  int64_t* out = labels.data<int64_t>();
  for (int64_t i = 0; i < raw.NumElements(); ++i) {
    if (in[i] >= kNumClasses) {
      return absl::DataLossError(absl::StrCat(path, ": label ", i, " is ", static_cast<int>(in[i]),
                                              ", not a class id in [0, ", kNumClasses, ")"));
    }
    out[i] = in[i];
  }
  return labels;
}

}  // namespace

absl::StatusOr<std::string> FindMnistFile(const std::string& dir, MnistSplit split, bool labels) {
  std::string name =
      absl::StrCat(absl::StripSuffix(dir, "/"), "/", split == MnistSplit::kTrain ? "train" : "t10k",
                   labels ? "-labels-idx1-ubyte" : "-images-idx3-ubyte");
  if (IsRegularFile(name)) return name;
  if (IsRegularFile(name + ".gz")) return name + ".gz";
  return MissingDataFile(name + "[.gz]");
}

absl::StatusOr<MnistData> LoadFashionMnist(const std::string& dir, MnistSplit split) {
  TG_ASSIGN_OR_RETURN(std::string images_path, FindMnistFile(dir, split, /*labels=*/false));
  TG_ASSIGN_OR_RETURN(std::string labels_path, FindMnistFile(dir, split, /*labels=*/true));
  TG_ASSIGN_OR_RETURN(Tensor raw_images, ReadIdx(images_path));
  TG_ASSIGN_OR_RETURN(Tensor raw_labels, ReadIdx(labels_path));
  MnistData data;
  TG_ASSIGN_OR_RETURN(data.images, ScaleImages(raw_images, images_path));
  TG_ASSIGN_OR_RETURN(data.labels, WidenLabels(raw_labels, labels_path));
  if (data.images.dim_size(0) != data.labels.dim_size(0)) {
    return absl::DataLossError(absl::StrCat(images_path, " holds ", data.images.dim_size(0),
                                            " images but ", labels_path, " holds ",
                                            data.labels.dim_size(0), " labels"));
  }
  return data;
}

}  // namespace tensorgrid
