#include "distributed/rpc/feed_decoding.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/status.h"

namespace tensorgrid {

absl::Status DecodeRunGraphFeeds(const google::protobuf::RepeatedPtrField<NamedTensorProto>& send,
                                 std::vector<Tensor>* feeds) {
  const int n = send.size();
  feeds->assign(n, Tensor());
  std::vector<bool> seen(n, false);
  for (const NamedTensorProto& named : send) {
    int index = -1;
    if (!absl::SimpleAtoi(named.name(), &index) || index < 0 || index >= n) {
      return errors::InvalidArgument("feed '", named.name(), "' is not an _Arg index in [0, ", n,
                                     ")");
    }
    if (seen[index]) return errors::InvalidArgument("feed ", index, " is given twice");
    seen[index] = true;
    absl::StatusOr<Tensor> tensor = TensorFromProto(named.tensor());
    if (!tensor.ok()) return WithContext(tensor.status(), absl::StrCat("feed ", index));
    (*feeds)[index] = *std::move(tensor);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> DecodeRunStepFeeds(
    const google::protobuf::RepeatedPtrField<NamedTensorProto>& feed) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  feeds.reserve(feed.size());
  for (const NamedTensorProto& named : feed) {
    absl::StatusOr<Tensor> tensor = TensorFromProto(named.tensor());
    if (!tensor.ok()) {
      return errors::InvalidArgument("feed '", named.name(), "': ", tensor.status().message());
    }
    feeds.emplace_back(named.name(), *std::move(tensor));
  }
  return feeds;
}

absl::StatusOr<std::vector<Tensor>> DecodeRunCallableFeeds(
    const google::protobuf::RepeatedPtrField<TensorProto>& feed) {
  std::vector<Tensor> feeds;
  feeds.reserve(feed.size());
  for (int i = 0; i < feed.size(); ++i) {
    absl::StatusOr<Tensor> tensor = TensorFromProto(feed.Get(i));
    if (!tensor.ok()) {
      return errors::InvalidArgument("feed ", i, ": ", tensor.status().message());
    }
    feeds.push_back(*std::move(tensor));
  }
  return feeds;
}

}  // namespace tensorgrid
