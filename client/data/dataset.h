// Dataset: a small in-memory input pipeline in tf.data's shape. A Dataset is
// an immutable value: each transformation returns a new Dataset that shares
// the tensors of the one it came from; an iterator walks it and yields one
// element (one tensor per component) at a time, ready to feed placeholders.
//
//   TG_ASSIGN_OR_RETURN(MnistData train, LoadFashionMnist());
//   Dataset ds = Dataset::FromTensorSlices({train.images, train.labels})
//                    .Shard(num_workers, worker_index)
//                    .Shuffle(/*buffer_size=*/10000, /*seed=*/42)
//                    .Batch(128, /*drop_remainder=*/true)
//                    .Repeat(/*count=*/5)
//                    .Prefetch(2);
//   TG_ASSIGN_OR_RETURN(std::unique_ptr<DatasetIterator> it, ds.MakeIterator());
//   FeedList feeds;
//   bool end = false;
//   while (true) {
//     TG_RETURN_IF_ERROR(it->GetNextFeeds({"x", "y"}, &feeds, &end));
//     if (end) break;
//     TG_RETURN_IF_ERROR(session->Run(feeds, {"loss"}, {"train"}, &out));
//   }
//
// Semantics follow tf.data: Shuffle keeps a buffer of `buffer_size` elements
// and draws from it at random (buffer_size >= the element count is a uniform
// permutation, 1 keeps the order), reshuffling each epoch under Repeat;
// Shard(n, i) keeps elements i, i+n, i+2n, ...; Batch stacks consecutive
// elements along a new dimension 0. Everything is deterministic: two
// iterators over one Dataset yield the same sequence.
//
// Errors: a transformation with a bad argument (Shard index out of range,
// batch_size 0, ...) returns a Dataset carrying InvalidArgument naming the
// transformation; later transformations keep the first error, and
// MakeIterator returns it. Check status() to see it earlier.
//
// Thread safety: a Dataset may be shared and iterated from any number of
// threads. A DatasetIterator serves one thread at a time.
#ifndef TENSORGRID_CLIENT_DATA_DATASET_H_
#define TENSORGRID_CLIENT_DATA_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/framework/tensor.h"

namespace tensorgrid {

// Session::Run's feed list: {placeholder name, tensor}.
using FeedList = std::vector<std::pair<std::string, Tensor>>;

class DatasetIterator {
 public:
  virtual ~DatasetIterator() = default;

  // The next element in `*out` (one tensor per component), or
  // `*end_of_sequence` = true and `*out` cleared when there is none. After an
  // error the iterator is at its end.
  virtual absl::Status GetNext(std::vector<Tensor>* out, bool* end_of_sequence) = 0;

  // GetNext, with component i paired with placeholder_names[i] for
  // Session::Run. InvalidArgument when the counts differ.
  absl::Status GetNextFeeds(const std::vector<std::string>& placeholder_names, FeedList* feeds,
                            bool* end_of_sequence);
};

namespace data_internal {
class DatasetNode;
}

class Dataset {
 public:
  // Element count of an infinite dataset (Repeat() of a non-empty one).
  static constexpr int64_t kInfiniteCardinality = -1;

  // An empty placeholder value: FailedPrecondition on use.
  Dataset();

  // Element i holds components[c] row i, for every c. Every component needs
  // rank >= 1 and the same dimension 0; rows share the components' buffers.
  static Dataset FromTensorSlices(std::vector<Tensor> components);

  // Draws each element at random from a buffer of the next `buffer_size`
  // elements (>= 1). The order is a function of `seed` and, when
  // `reshuffle_each_iteration`, of the epoch under Repeat.
  Dataset Shuffle(int64_t buffer_size, uint64_t seed, bool reshuffle_each_iteration = true) const;
  // Stacks `batch_size` (>= 1) consecutive elements; the last batch may be
  // smaller unless `drop_remainder`. Elements of a batch need equal shapes.
  Dataset Batch(int64_t batch_size, bool drop_remainder = false) const;
  // The elements `count` times over (-1: forever). An empty input stays empty.
  Dataset Repeat(int64_t count = -1) const;
  // Elements index, index + num_shards, ... : shard `index` of `num_shards`.
  Dataset Shard(int64_t num_shards, int64_t index) const;
  // Computes up to `buffer_size` elements ahead on a background thread
  // (0: no prefetching). The thread stops when the iterator is destroyed.
  Dataset Prefetch(int64_t buffer_size) const;

  const absl::Status& status() const { return status_; }
  int num_components() const;
  // Elements per full iteration, or kInfiniteCardinality (0 on error).
  int64_t Cardinality() const;

  absl::StatusOr<std::unique_ptr<DatasetIterator>> MakeIterator() const;

 private:
  Dataset(std::shared_ptr<const data_internal::DatasetNode> node, absl::Status status);
  // `this` if it carries an error, else the dataset `make` builds (or an error).
  template <typename MakeNode>
  Dataset Then(const char* transformation, const absl::Status& arg_status, MakeNode make) const;

  std::shared_ptr<const data_internal::DatasetNode> node_;
  absl::Status status_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_DATA_DATASET_H_
