#include "client/data/dataset.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace data_internal {

using Element = std::vector<Tensor>;

// One stage of a pipeline. Immutable; iterators keep their node alive.
class DatasetNode : public std::enable_shared_from_this<DatasetNode> {
 public:
  explicit DatasetNode(int num_components) : num_components_(num_components) {}
  virtual ~DatasetNode() = default;

  // `epoch_key` is 0 for a top-level iterator; Repeat derives a distinct key
  // for each later epoch, which Shuffle mixes into its seed.
  virtual std::unique_ptr<DatasetIterator> MakeIterator(uint64_t epoch_key) const = 0;
  virtual int64_t Cardinality() const = 0;
  int num_components() const { return num_components_; }

 private:
  int num_components_;
};

namespace {

using NodePtr = std::shared_ptr<const DatasetNode>;
constexpr int64_t kInfinite = Dataset::kInfiniteCardinality;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
uint64_t Mix(uint64_t a, uint64_t b) { return SplitMix64(a ^ SplitMix64(b)); }

// A small deterministic generator: the same seed gives the same draws with
// any compiler and standard library.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return SplitMix64(state_++); }
  // Uniform in [0, n), n >= 1 (Lemire's multiply-shift with rejection).
  uint64_t Uniform(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = -n % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(Next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  uint64_t state_;
};

absl::Status End(Element* out, bool* end_of_sequence) {
  out->clear();
  *end_of_sequence = true;
  return absl::OkStatus();
}

// ---- FromTensorSlices ----

class SliceIterator final : public DatasetIterator {
 public:
  SliceIterator(NodePtr node, const std::vector<Tensor>* components)
      : node_(std::move(node)), components_(*components) {}
  absl::Status GetNext(Element* out, bool* end_of_sequence) override {
    if (components_.empty() || next_ >= components_[0].dim_size(0))
      return End(out, end_of_sequence);
    out->clear();
    for (const Tensor& c : components_) {
      TensorShape row = c.shape();
      row.RemoveDim(0);
      out->push_back(c.Slice(next_, next_ + 1).Reshaped(row));
    }
    ++next_;
    *end_of_sequence = false;
    return absl::OkStatus();
  }

 private:
  NodePtr node_;  // owns components_
  const std::vector<Tensor>& components_;
  int64_t next_ = 0;
};

class SliceNode final : public DatasetNode {
 public:
  explicit SliceNode(std::vector<Tensor> components)
      : DatasetNode(static_cast<int>(components.size())), components_(std::move(components)) {}
  std::unique_ptr<DatasetIterator> MakeIterator(uint64_t) const override {
    return std::make_unique<SliceIterator>(shared_from_this(), &components_);
  }
  int64_t Cardinality() const override { return components_[0].dim_size(0); }

 private:
  std::vector<Tensor> components_;
};

// ---- Shuffle ----

class ShuffleIterator final : public DatasetIterator {
 public:
  ShuffleIterator(std::unique_ptr<DatasetIterator> input, int64_t buffer_size, uint64_t seed)
      : input_(std::move(input)), buffer_size_(buffer_size), random_(seed) {}
  absl::Status GetNext(Element* out, bool* end_of_sequence) override {
    while (!input_done_ && static_cast<int64_t>(buffer_.size()) < buffer_size_) {
      Element e;
      bool end = false;
      absl::Status s = input_->GetNext(&e, &end);
      if (!s.ok()) {
        input_done_ = true;
        buffer_.clear();
        return s;
      }
      if (end) {
        input_done_ = true;
      } else {
        buffer_.push_back(std::move(e));
      }
    }
    if (buffer_.empty()) return End(out, end_of_sequence);
    // Take a random slot and fill the hole with the last element; the next
    // call refills the buffer from the input.
    size_t pick = static_cast<size_t>(random_.Uniform(buffer_.size()));
    *out = std::move(buffer_[pick]);
    if (pick + 1 != buffer_.size()) buffer_[pick] = std::move(buffer_.back());
    buffer_.pop_back();
    *end_of_sequence = false;
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<DatasetIterator> input_;
  int64_t buffer_size_;
  Random random_;
  std::vector<Element> buffer_;
  bool input_done_ = false;
};

class ShuffleNode final : public DatasetNode {
 public:
  ShuffleNode(NodePtr input, int64_t buffer_size, uint64_t seed, bool reshuffle)
      : DatasetNode(input->num_components()),
        input_(std::move(input)),
        buffer_size_(buffer_size),
        seed_(seed),
        reshuffle_(reshuffle) {}
  std::unique_ptr<DatasetIterator> MakeIterator(uint64_t epoch_key) const override {
    uint64_t seed = Mix(seed_, reshuffle_ ? epoch_key : 0);
    return std::make_unique<ShuffleIterator>(input_->MakeIterator(epoch_key), buffer_size_, seed);
  }
  int64_t Cardinality() const override { return input_->Cardinality(); }

 private:
  NodePtr input_;
  int64_t buffer_size_;
  uint64_t seed_;
  bool reshuffle_;
};

// ---- Batch ----

// Stacks component `c` of `elements` into one new tensor, copying whole rows.
absl::StatusOr<Tensor> Stack(const std::vector<Element>& elements, size_t c) {
  const Tensor& first = elements[0][c];
  TensorShape shape = first.shape();
  shape.InsertDim(0, static_cast<int64_t>(elements.size()));
  TG_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(first.dtype(), shape));
  const size_t row_bytes = first.TotalBytes();
  for (size_t k = 0; k < elements.size(); ++k) {
    const Tensor& row = elements[k][c];
    if (row.dtype() != first.dtype() || row.shape() != first.shape()) {
      return errors::InvalidArgument(
          "Batch: component ", c, " of element ", k, " is ", DataTypeString(row.dtype()), " ",
          row.shape().DebugString(), " but element 0 has ", DataTypeString(first.dtype()), " ",
          first.shape().DebugString(), "; elements of one batch need equal shapes");
    }
    if (first.dtype() == DT_STRING) {
      std::copy_n(row.data<std::string>(), row.NumElements(),
                  out.data<std::string>() + k * row.NumElements());
    } else if (row_bytes > 0) {
      std::memcpy(static_cast<char*>(out.raw_data()) + k * row_bytes, row.raw_data(), row_bytes);
    }
  }
  return out;
}

class BatchIterator final : public DatasetIterator {
 public:
  BatchIterator(std::unique_ptr<DatasetIterator> input, int64_t batch_size, bool drop_remainder)
      : input_(std::move(input)), batch_size_(batch_size), drop_remainder_(drop_remainder) {}
  absl::Status GetNext(Element* out, bool* end_of_sequence) override {
    std::vector<Element> rows;
    while (!input_done_ && static_cast<int64_t>(rows.size()) < batch_size_) {
      Element e;
      bool end = false;
      absl::Status s = input_->GetNext(&e, &end);
      if (!s.ok()) input_done_ = true;
      TG_RETURN_IF_ERROR(s);
      if (end) {
        input_done_ = true;
      } else {
        rows.push_back(std::move(e));
      }
    }
    if (rows.empty() || (drop_remainder_ && static_cast<int64_t>(rows.size()) < batch_size_)) {
      return End(out, end_of_sequence);
    }
    Element batch;
    for (size_t c = 0; c < rows[0].size(); ++c) {
      auto stacked = Stack(rows, c);
      if (!stacked.ok()) {
        input_done_ = true;
        return stacked.status();
      }
      batch.push_back(std::move(stacked).value());
    }
    *out = std::move(batch);
    *end_of_sequence = false;
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<DatasetIterator> input_;
  int64_t batch_size_;
  bool drop_remainder_;
  bool input_done_ = false;
};

class BatchNode final : public DatasetNode {
 public:
  BatchNode(NodePtr input, int64_t batch_size, bool drop_remainder)
      : DatasetNode(input->num_components()),
        input_(std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder) {}
  std::unique_ptr<DatasetIterator> MakeIterator(uint64_t epoch_key) const override {
    return std::make_unique<BatchIterator>(input_->MakeIterator(epoch_key), batch_size_,
                                           drop_remainder_);
  }
  int64_t Cardinality() const override {
    int64_t n = input_->Cardinality();
    if (n == kInfinite) return kInfinite;
    return drop_remainder_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
  }

 private:
  NodePtr input_;
  int64_t batch_size_;
  bool drop_remainder_;
};

// ---- Repeat ----

class RepeatIterator final : public DatasetIterator {
 public:
  RepeatIterator(NodePtr input, int64_t count, uint64_t epoch_key)
      : input_(std::move(input)), count_(count), epoch_key_(epoch_key) {}
  absl::Status GetNext(Element* out, bool* end_of_sequence) override {
    while (!done_) {
      if (current_ == nullptr) {
        if (count_ != -1 && epoch_ >= count_) break;
        // Epoch 0 keeps the parent's key, so the first pass equals the input.
        current_ = input_->MakeIterator(epoch_ == 0 ? epoch_key_ : Mix(epoch_key_, epoch_));
        produced_this_epoch_ = false;
      }
      absl::Status s = current_->GetNext(out, end_of_sequence);
      if (!s.ok()) done_ = true;
      TG_RETURN_IF_ERROR(s);
      if (!*end_of_sequence) {
        produced_this_epoch_ = true;
        return absl::OkStatus();
      }
      current_.reset();
      ++epoch_;
      if (!produced_this_epoch_) done_ = true;  // an empty input repeats to nothing
    }
    done_ = true;
    return End(out, end_of_sequence);
  }

 private:
  NodePtr input_;
  int64_t count_;
  uint64_t epoch_key_;
  std::unique_ptr<DatasetIterator> current_;
  int64_t epoch_ = 0;
  bool produced_this_epoch_ = false;
  bool done_ = false;
};

class RepeatNode final : public DatasetNode {
 public:
  RepeatNode(NodePtr input, int64_t count)
      : DatasetNode(input->num_components()), input_(std::move(input)), count_(count) {}
  std::unique_ptr<DatasetIterator> MakeIterator(uint64_t epoch_key) const override {
    return std::make_unique<RepeatIterator>(input_, count_, epoch_key);
  }
  int64_t Cardinality() const override {
    int64_t n = input_->Cardinality();
    if (n == 0 || count_ == 0) return 0;
    if (n == kInfinite || count_ == -1) return kInfinite;
    return n * count_;
  }

 private:
  NodePtr input_;
  int64_t count_;
};

// ---- Shard ----

class ShardIterator final : public DatasetIterator {
 public:
  ShardIterator(std::unique_ptr<DatasetIterator> input, int64_t num_shards, int64_t index)
      : input_(std::move(input)), num_shards_(num_shards), index_(index) {}
  absl::Status GetNext(Element* out, bool* end_of_sequence) override {
    while (!done_) {
      absl::Status s = input_->GetNext(out, end_of_sequence);
      if (!s.ok() || *end_of_sequence) done_ = true;
      TG_RETURN_IF_ERROR(s);
      if (*end_of_sequence) break;
      if (position_++ % num_shards_ == index_) return absl::OkStatus();
    }
    return End(out, end_of_sequence);
  }

 private:
  std::unique_ptr<DatasetIterator> input_;
  int64_t num_shards_;
  int64_t index_;
  int64_t position_ = 0;
  bool done_ = false;
};

class ShardNode final : public DatasetNode {
 public:
  ShardNode(NodePtr input, int64_t num_shards, int64_t index)
      : DatasetNode(input->num_components()),
        input_(std::move(input)),
        num_shards_(num_shards),
        index_(index) {}
  std::unique_ptr<DatasetIterator> MakeIterator(uint64_t epoch_key) const override {
    return std::make_unique<ShardIterator>(input_->MakeIterator(epoch_key), num_shards_, index_);
  }
  int64_t Cardinality() const override {
    int64_t n = input_->Cardinality();
    if (n == kInfinite) return kInfinite;
    return n <= index_ ? 0 : (n - index_ + num_shards_ - 1) / num_shards_;
  }

 private:
  NodePtr input_;
  int64_t num_shards_;
  int64_t index_;
};

// ---- Prefetch ----

// A producer thread runs the input iterator ahead of the consumer, keeping at
// most `buffer_size` results queued. The destructor stops and joins it; the
// producer only ever blocks on the queue, so that is prompt.
class PrefetchIterator final : public DatasetIterator {
 public:
  PrefetchIterator(std::unique_ptr<DatasetIterator> input, int64_t buffer_size)
      : input_(std::move(input)), buffer_size_(buffer_size), thread_([this] { Produce(); }) {}
  ~PrefetchIterator() override {
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
    }
    thread_.join();
  }

  absl::Status GetNext(Element* out, bool* end_of_sequence) override {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &PrefetchIterator::ReadyForConsumer));
    if (queue_.empty()) return End(out, end_of_sequence);
    Result r = std::move(queue_.front());
    queue_.pop_front();
    if (!r.status.ok()) {
      queue_.clear();
      return r.status;
    }
    *out = std::move(r.element);
    *end_of_sequence = false;
    return absl::OkStatus();
  }

 private:
  struct Result {
    absl::Status status;
    Element element;
  };

  bool ReadyForConsumer() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !queue_.empty() || producer_done_;
  }
  bool ReadyForProducer() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancelled_ || static_cast<int64_t>(queue_.size()) < buffer_size_;
  }

  void Produce() {
    for (;;) {
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &PrefetchIterator::ReadyForProducer));
        if (cancelled_) break;
      }
      // The input is only touched by this thread, outside the lock.
      Result r;
      bool end = false;
      r.status = input_->GetNext(&r.element, &end);
      absl::MutexLock lock(&mu_);
      if (cancelled_) break;
      if (end && r.status.ok()) break;
      bool failed = !r.status.ok();
      queue_.push_back(std::move(r));
      if (failed) break;
    }
    absl::MutexLock lock(&mu_);
    producer_done_ = true;
  }

  std::unique_ptr<DatasetIterator> input_;
  const int64_t buffer_size_;
  absl::Mutex mu_;
  std::deque<Result> queue_ ABSL_GUARDED_BY(mu_);
  bool producer_done_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts after everything it uses
};

class PrefetchNode final : public DatasetNode {
 public:
  PrefetchNode(NodePtr input, int64_t buffer_size)
      : DatasetNode(input->num_components()), input_(std::move(input)), buffer_size_(buffer_size) {}
  std::unique_ptr<DatasetIterator> MakeIterator(uint64_t epoch_key) const override {
    return std::make_unique<PrefetchIterator>(input_->MakeIterator(epoch_key), buffer_size_);
  }
  int64_t Cardinality() const override { return input_->Cardinality(); }

 private:
  NodePtr input_;
  int64_t buffer_size_;
};

}  // namespace
}  // namespace data_internal

using data_internal::DatasetNode;

absl::Status DatasetIterator::GetNextFeeds(const std::vector<std::string>& placeholder_names,
                                           FeedList* feeds, bool* end_of_sequence) {
  std::vector<Tensor> element;
  TG_RETURN_IF_ERROR(GetNext(&element, end_of_sequence));
  feeds->clear();
  if (*end_of_sequence) return absl::OkStatus();
  if (placeholder_names.size() != element.size()) {
    return errors::InvalidArgument("GetNextFeeds: ", placeholder_names.size(),
                                   " placeholder names for elements of ", element.size(),
                                   " components");
  }
  for (size_t i = 0; i < element.size(); ++i) {
    feeds->emplace_back(placeholder_names[i], std::move(element[i]));
  }
  return absl::OkStatus();
}

Dataset::Dataset()
    : Dataset(nullptr, errors::FailedPrecondition(
                           "empty Dataset: build one with Dataset::FromTensorSlices")) {}

Dataset::Dataset(std::shared_ptr<const DatasetNode> node, absl::Status status)
    : node_(std::move(node)), status_(std::move(status)) {}

Dataset Dataset::FromTensorSlices(std::vector<Tensor> components) {
  if (components.empty()) {
    return Dataset(nullptr, errors::InvalidArgument("FromTensorSlices: no components"));
  }
  for (size_t c = 0; c < components.size(); ++c) {
    const Tensor& t = components[c];
    absl::Status bad;
    if (!t.IsInitialized() || t.dtype() == DT_RESOURCE || IsRefType(t.dtype())) {
      bad = errors::InvalidArgument("FromTensorSlices: component ", c, " has type ",
                                    DataTypeString(t.dtype()), ", which cannot be sliced");
    } else if (t.dims() < 1) {
      bad = errors::InvalidArgument("FromTensorSlices: component ", c,
                                    " is a scalar; slicing needs rank >= 1");
    } else if (t.dim_size(0) != components[0].dim_size(0)) {
      bad = errors::InvalidArgument(
          "FromTensorSlices: component ", c, " has shape ", t.shape().DebugString(),
          " but component 0 has ", components[0].shape().DebugString(), "; dimension 0 must match");
    }
    if (!bad.ok()) return Dataset(nullptr, bad);
  }
  return Dataset(std::make_shared<data_internal::SliceNode>(std::move(components)),
                 absl::OkStatus());
}

template <typename MakeNode>
Dataset Dataset::Then(const char* transformation, const absl::Status& arg_status,
                      MakeNode make) const {
  if (!status_.ok()) return *this;
  if (!arg_status.ok()) return Dataset(nullptr, WithContext(arg_status, transformation));
  return Dataset(make(), absl::OkStatus());
}

Dataset Dataset::Shuffle(int64_t buffer_size, uint64_t seed, bool reshuffle_each_iteration) const {
  absl::Status arg = buffer_size >= 1
                         ? absl::OkStatus()
                         : errors::InvalidArgument("buffer_size must be >= 1, got ", buffer_size);
  return Then("Shuffle", arg, [&] {
    return std::make_shared<data_internal::ShuffleNode>(node_, buffer_size, seed,
                                                        reshuffle_each_iteration);
  });
}

Dataset Dataset::Batch(int64_t batch_size, bool drop_remainder) const {
  absl::Status arg = batch_size >= 1
                         ? absl::OkStatus()
                         : errors::InvalidArgument("batch_size must be >= 1, got ", batch_size);
  return Then("Batch", arg, [&] {
    return std::make_shared<data_internal::BatchNode>(node_, batch_size, drop_remainder);
  });
}

Dataset Dataset::Repeat(int64_t count) const {
  absl::Status arg =
      count >= -1 ? absl::OkStatus()
                  : errors::InvalidArgument("count must be >= 0 or -1 (forever), got ", count);
  return Then("Repeat", arg,
              [&] { return std::make_shared<data_internal::RepeatNode>(node_, count); });
}

Dataset Dataset::Shard(int64_t num_shards, int64_t index) const {
  absl::Status arg;
  if (num_shards < 1) {
    arg = errors::InvalidArgument("num_shards must be >= 1, got ", num_shards);
  } else if (index < 0 || index >= num_shards) {
    arg = errors::InvalidArgument("index ", index, " is out of range for ", num_shards,
                                  " shards (0 <= index < num_shards)");
  }
  return Then("Shard", arg,
              [&] { return std::make_shared<data_internal::ShardNode>(node_, num_shards, index); });
}

Dataset Dataset::Prefetch(int64_t buffer_size) const {
  if (buffer_size == 0 && status_.ok()) return *this;
  absl::Status arg = buffer_size >= 0
                         ? absl::OkStatus()
                         : errors::InvalidArgument("buffer_size must be >= 0, got ", buffer_size);
  return Then("Prefetch", arg,
              [&] { return std::make_shared<data_internal::PrefetchNode>(node_, buffer_size); });
}

int Dataset::num_components() const { return node_ ? node_->num_components() : 0; }

int64_t Dataset::Cardinality() const { return node_ ? node_->Cardinality() : 0; }

absl::StatusOr<std::unique_ptr<DatasetIterator>> Dataset::MakeIterator() const {
  TG_RETURN_IF_ERROR(status_);
  return node_->MakeIterator(/*epoch_key=*/0);
}

}  // namespace tensorgrid
